/**
 * Wire shapes of the service's OAuth interface (snake_case, as on the wire) and the vocabulary the
 * emulator and the store share. The emulator writes these shapes; the client never trusts them:
 * its parsers (parse.ts) check unknown JSON field by field.
 */

/** Token endpoint success body (spec §2.2; RFC 6749 §5.1). */
export interface TokenResponseWire {
  access_token: string;
  token_type: string;
  /** Seconds; absent when the token does not expire by time. */
  expires_in?: number;
  /** Space-separated scopes. */
  scope?: string;
  refresh_token?: string;
  /** Unix seconds (Doorkeeper). */
  created_at?: number;
}

/** Token info record as the spec gives it (§2.4). */
export interface TokenInfoSpecWire {
  resource_owner_id: number | null;
  scope: string[];
  /** Remaining lifetime in seconds; null when the token does not expire. */
  expires_in_seconds: number | null;
  application: { uid: number };
  created_at?: number;
}

/** Token info record as Doorkeeper 5 gives it (as servers of the family do). */
export interface TokenInfoDoorkeeper5Wire {
  resource_owner_id: number | null;
  scope: string[];
  /** Remaining lifetime in seconds; null when the token does not expire. */
  expires_in: number | null;
  application: { uid: string };
  created_at?: number;
}

/** Error body of the token, token info and revoke endpoints (RFC 6749 §5.2). */
export interface OAuthErrorWire {
  error: string;
  error_description?: string;
  state?: string;
}

/** What mmauth keeps of a server's authorization server metadata (RFC 8414 §2); shared by oauth/ and the store. */
export interface ServerMetadata {
  /** The issuer identifier, exactly as the document gives it (RFC 8414 §3.3; RFC 9207 compares `iss` to it). */
  issuer: string;
  authorizationEndpoint: string | undefined;
  tokenEndpoint: string | undefined;
  revocationEndpoint: string | undefined;
  introspectionEndpoint: string | undefined;
  /** `device_authorization_endpoint` (RFC 8628 §4): the server offers the device authorization grant. */
  deviceAuthorizationEndpoint?: string | undefined;
  /** `authorization_response_iss_parameter_supported`: every authorization response must carry `iss` (RFC 9207 §2.4). */
  isIssRequired: boolean;
  /** `code_challenge_methods_supported`, when listed. */
  codeChallengeMethods: string[] | undefined;
  /** `response_types_supported`, when listed. */
  responseTypes: string[] | undefined;
  /** The well-known document it came from. */
  source: 'oauth-authorization-server' | 'openid-configuration';
}

/** A server's metadata as a profile keeps it: read at `fetchedAt` (ISO 8601) from `baseUrl`; null when it has none. */
export interface CachedServerMetadata {
  fetchedAt: string;
  baseUrl: string;
  metadata: ServerMetadata | null;
}

/** How a token came to be: a grant type of RFC 6749 §4, or a personal access token (spec §1). */
export type TokenOrigin = 'authorization_code' | 'client_credentials' | 'implicit' | 'personal';

/** Every TokenOrigin, for parsers. */
export const TOKEN_ORIGINS: readonly TokenOrigin[] = [
  'authorization_code',
  'client_credentials',
  'implicit',
  'personal',
];

/** Scopes the spec names (§2.5); the default is `service`. */
export const KNOWN_SCOPES = [
  'service',
  'userprofile.email',
  'userprofile.profile',
  'userinfo.email',
  'userinfo.profile',
] as const;

/** The scope requested when none is given (as servers of the family do). */
export const DEFAULT_SCOPE = 'service';
