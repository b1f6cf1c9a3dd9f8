import type { RenewalKind } from '../grant/renewal.js';
import type { CachedServerMetadata } from '../store/profile.js';
import type { TokenState } from '../store/token-state.js';
import type { TokenCheck } from '../token/token-check.js';

/** The server metadata of a profile as `status --json` shows it. */
export interface ServerMetadataJson {
  issuer: string;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  revocation_endpoint: string | null;
  iss_required: boolean;
  fetched_at: string;
}

/** `cached` as status shows it: null when the profile holds none, or the server serves none. */
export function serverMetadataJson(cached: CachedServerMetadata | undefined): ServerMetadataJson | null {
  const metadata = cached?.metadata;
  if (cached === undefined || metadata === null || metadata === undefined) return null;
  return {
    issuer: metadata.issuer,
    authorization_endpoint: metadata.authorizationEndpoint ?? null,
    token_endpoint: metadata.tokenEndpoint ?? null,
    revocation_endpoint: metadata.revocationEndpoint ?? null,
    iss_required: metadata.isIssRequired,
    fetched_at: cached.fetchedAt,
  };
}

/** One profile as `status --json` prints it (README "JSON output"). */
export interface ProfileStatusJson {
  name: string;
  selected: boolean;
  base_url: string | null;
  client_id: string | null;
  grant: string | null;
  /** `device` for a grant signed in from another device (RFC 8628); else null. */
  flow: 'device' | null;
  scope: string | null;
  state: TokenState;
  expires_in: number | null;
  expires_at: string | null;
  /** When mmauth received the token (its sign-in or last renewal); null without one. */
  obtained_at: string | null;
  has_client_secret: boolean;
  /** What token info said with --check; null when not checked. */
  check: TokenCheck;
  /** Whether its sealed credentials are stored but their key is not in the keyring. */
  credentials_lost: boolean;
  /** Whether a refresh token is stored (never the token itself). */
  has_refresh_token: boolean;
  /** How the token renews. */
  renewal: RenewalKind;
  /** Where its credentials are: `keyring` (sealed in the file, the key in the OS keyring) or `file` (plain text). */
  credential_store: 'keyring' | 'file';
  /** The server's metadata as the profile holds it (RFC 8414): its issuer and endpoints; null for none read or none served. */
  server_metadata: ServerMetadataJson | null;
}
