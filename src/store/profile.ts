import { MmauthError } from '../errors.js';
import type { CachedServerMetadata, TokenOrigin } from '../oauth/wire.js';

export type { CachedServerMetadata };
import type { ProfileSecrets } from './secrets.js';

/**
 * Where a profile's credentials are kept: `keyring` (sealed in the file, the key in the OS
 * keyring), `file` (in the file in plain text, asked for: MMAUTH_CREDENTIAL_STORE=file or
 * --insecure-storage), `fallback` (in plain text because no keyring could be used under `auto`;
 * it moves into the keyring at its next write). Undefined: written by an earlier mmauth, in plain
 * text, treated as `fallback`.
 */
export type CredentialStoreRecord = 'keyring' | 'file' | 'fallback';

/** A token as kept on disk. */
export interface StoredToken {
  accessToken: string;
  /** Lower-cased token type, `bearer`. */
  tokenType: string;
  /** Space-separated granted scopes, when the server said. */
  scope: string | undefined;
  /** How it was obtained; stored as `grant`. */
  grant: TokenOrigin;
  /** When mmauth received it, ISO 8601. */
  obtainedAt: string;
  /** Absolute expiry, ISO 8601; undefined when the server sent no `expires_in` (no expiry). */
  expiresAt: string | undefined;
  /** The refresh token that came with it (RFC 6749 §6); a secret, never printed. */
  refreshToken?: string | undefined;
  /** When token info last accepted it for `token --verify`, ISO 8601 (at most one check a minute). */
  verifiedAt?: string | undefined;
  /**
   * The server hands this token back when asked to renew it (Doorkeeper's `reuse_access_token`):
   * a shared token, renewed no more than once per lifetime, once it has expired.
   */
  isShared?: boolean | undefined;
  /** Signed in by the device authorization grant (RFC 8628): a code-flow grant in every other way. */
  viaDevice?: boolean | undefined;
}

/** A named set of settings plus at most one token. */
export interface Profile {
  baseUrl: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** Space-separated scopes to request by default. */
  scope: string | undefined;
  /** A fixed loopback redirect URI given with --redirect-uri, if any. */
  redirectUri: string | undefined;
  /** The loopback redirect URI's path, when not /callback (a distinct path per server: mix-up defence). */
  callbackPath?: string | undefined;
  /**
   * The server's device authorization endpoint (RFC 8628 §3.1) where its metadata names none (GitLab's
   * `/oauth/authorize_device`): `login --device-authorization-url`, kept like the callback path.
   */
  deviceAuthorizationUrl?: string | undefined;
  token: StoredToken | undefined;
  /** How the profile's latest token was obtained, kept after the token is gone (for the next step). */
  lastGrant: TokenOrigin | undefined;
  /** A login started with `login --start`, waiting for `--complete` (its verifier is a secret). */
  pendingLogin?: PendingLogin | undefined;
  /**
   * Access tokens of renewals whose first use has not reached the server yet: presenting each once
   * retires the refresh token it replaced (as servers of the family do). Secrets.
   */
  chainToRetire?: string[] | undefined;
  /**
   * Access tokens mmauth replaced without ending them (a client-credentials renewal, a re-login over a
   * token with no refresh token), kept while their lifetime lasts so that logout can end them.
   * Secrets.
   */
  replacedTokens?: ReplacedToken[] | undefined;
  /** The server's metadata as last read (RFC 8414), with when and for which base URL; `metadata` null: the server has none (404). */
  serverMetadata?: CachedServerMetadata | undefined;
  /** Where its credentials are kept; the store sets it at each write. */
  credentialStore?: CredentialStoreRecord | undefined;
}

/** A token mmauth replaced and did not end: live on the server until `expiresAt` (undefined: no expiry). */
export interface ReplacedToken {
  accessToken: string;
  /** ISO 8601, or undefined for a token that never expires. */
  expiresAt: string | undefined;
}

/** `tokens` without those expired at `nowMs` (epoch ms); undefined when none is left (the project's rules: dropped at each write). */
export function liveReplacedTokens(
  tokens: readonly ReplacedToken[] | undefined,
  nowMs: number,
): ReplacedToken[] | undefined {
  const live = (tokens ?? []).filter((token) => token.expiresAt === undefined || Date.parse(token.expiresAt) > nowMs);
  return live.length === 0 ? undefined : live;
}

/** The on-disk form of replaced tokens: `TOKEN!EPOCH_S` (or `TOKEN` for no expiry), space-separated; `!` is no token character (RFC 6750 §2.1). */
export function encodeReplacedTokens(tokens: readonly ReplacedToken[] | undefined): string | undefined {
  if (tokens === undefined || tokens.length === 0) return undefined;
  return tokens
    .map(({ accessToken, expiresAt }) =>
      expiresAt === undefined ? accessToken : `${accessToken}!${Math.round(Date.parse(expiresAt) / 1000)}`,
    )
    .join(' ');
}

/** Reads encodeReplacedTokens' form; entries it cannot read are dropped. */
export function decodeReplacedTokens(text: string | undefined): ReplacedToken[] | undefined {
  const tokens = (text ?? '')
    .split(' ')
    .filter((entry) => entry !== '')
    .flatMap((entry): ReplacedToken[] => {
      const [accessToken = '', epochS] = entry.split('!');
      if (accessToken === '') return [];
      if (epochS === undefined) return [{ accessToken, expiresAt: undefined }];
      const ms = Number(epochS) * 1000;
      return Number.isFinite(ms) ? [{ accessToken, expiresAt: new Date(ms).toISOString() }] : [];
    });
  return tokens.length === 0 ? undefined : tokens;
}

/** An authorization request waiting for its response (two-step login): what `--complete` checks against. */
/**
 * A login started and not yet completed (`login --start`). For a device login (`responseType`
 * `device`, RFC 8628): `url` is the device authorization endpoint, `state` the user code,
 * `codeVerifier` the device code (sealed: a secret), `redirectUri` the verification address, and
 * `deviceIntervalS` the polling interval.
 */
export interface PendingLogin {
  url: string;
  state: string;
  codeVerifier: string;
  redirectUri: string;
  responseType: 'code' | 'token' | 'device';
  /** Seconds between polls of a device login. */
  deviceIntervalS?: number | undefined;
  clientId: string;
  /** The client secret given to `--start` (sealed as the verifier is), for `--complete` to send with `clientId` only. */
  clientSecret?: string | undefined;
  scope: string;
  /** ISO 8601; past it, `--complete` refuses. */
  expiresAt: string;
}

/** A profile with nothing in it. */
export function emptyProfile(): Profile {
  return {
    baseUrl: undefined,
    clientId: undefined,
    clientSecret: undefined,
    scope: undefined,
    redirectUri: undefined,
    lastGrant: undefined,
    token: undefined,
  };
}

/** Returns `name` if it is a profile name (letters, digits, `.`, `_`, `-`, 1 to 64), else throws `invalid_profile_name`. */
export function assertProfileName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    throw new MmauthError('invalid_profile_name', `invalid profile name "${name}"`);
  }
  return name;
}

/** The secrets a profile holds. */
export function secretsOf(profile: Profile): ProfileSecrets {
  return {
    clientSecret: profile.clientSecret,
    accessToken: profile.token?.accessToken,
    refreshToken: profile.token?.refreshToken,
    codeVerifier: profile.pendingLogin?.codeVerifier,
    chainToRetire: profile.chainToRetire?.length ? profile.chainToRetire.join(' ') : undefined,
    replacedTokens: encodeReplacedTokens(profile.replacedTokens),
    pendingClientSecret: profile.pendingLogin?.clientSecret,
  };
}
