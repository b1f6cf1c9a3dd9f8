import { MmauthError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { isVisibleWord } from '../util/visible-word.js';

/** A validated token endpoint answer (spec §2.2, RFC 6749 §5.1). */
export interface TokenResponse {
  accessToken: string;
  /** Lower-cased; always `bearer` (compared case-insensitively, RFC 6749 §5.1). */
  tokenType: string;
  /** Lifetime in seconds; undefined when the server sent none (no expiry by time). */
  expiresInSeconds: number | undefined;
  /** Space-separated granted scopes; undefined when the server sent none. */
  scope: string | undefined;
  /** A refresh token (RFC 6749 §1.5, §5.1), when the server issued one. */
  refreshToken?: string;
}

/** A validated token info record, from either the spec's variant or Doorkeeper 5's. */
export interface TokenInfo {
  /** The resource owner's id; null for a token with no user (client credentials). */
  resourceOwnerId: number | string | null;
  scopes: string[];
  /** Remaining lifetime in seconds; null when the token does not expire by time. */
  expiresInSeconds: number | null;
  /** The client application's uid (integer in the spec, string in Doorkeeper 5); null if absent. */
  applicationUid: number | string | null;
  /** Unix seconds, when the server sent it. */
  createdAt: number | undefined;
}

/** Ten years in seconds: anything longer is a broken server, not a long-lived token. */
const MAX_LIFETIME_S = 10 * 366 * 24 * 3600;

function malformed(endpoint: string, what: string): MmauthError {
  return new MmauthError('malformed_response', `${endpoint} sent a malformed answer: ${what}`);
}

/** RFC 6749 §A.12/§A.13: access tokens and scope tokens are printable ASCII (VSCHAR / NQCHAR). */
function isVisibleAscii(value: string): boolean {
  return /^[\x20-\x7e]+$/.test(value);
}

function parseLifetime(endpoint: string, field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_LIFETIME_S) {
    throw malformed(
      endpoint,
      `"${field}" must be a whole number of seconds between 0 and ${MAX_LIFETIME_S}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Validates a token endpoint success body (spec §2.2; RFC 6749 §5.1): `access_token` a non-empty
 * printable string, `token_type` bearer in any case, `expires_in` absent/null or a whole number
 * of seconds, `scope` absent or a string. Throws MmauthError `malformed_response` naming the bad field.
 */
export function parseTokenResponse(json: unknown, endpoint = 'the token endpoint'): TokenResponse {
  if (!isRecord(json)) {
    throw malformed(endpoint, 'the body is not a JSON object');
  }
  const {
    access_token: accessToken,
    token_type: tokenType,
    expires_in: expiresIn,
    scope,
    refresh_token: refreshToken,
  } = json;
  // RFC 6750 §2.1: a bearer token is printable ASCII without spaces (b64token, widened).
  if (typeof accessToken !== 'string' || !isVisibleWord(accessToken)) {
    throw malformed(endpoint, '"access_token" is missing or not a printable string');
  }
  if (typeof tokenType !== 'string') {
    throw malformed(endpoint, '"token_type" is missing or not a string');
  }
  if (tokenType.toLowerCase() !== 'bearer') {
    throw malformed(endpoint, `"token_type" is "${tokenType}", mmauth only handles bearer tokens (RFC 6750)`);
  }
  if (
    scope !== undefined &&
    scope !== null &&
    (typeof scope !== 'string' || (scope !== '' && !isVisibleAscii(scope)))
  ) {
    throw malformed(endpoint, '"scope" must be a space-separated string of printable ASCII scope tokens');
  }
  if (
    refreshToken !== undefined &&
    refreshToken !== null &&
    (typeof refreshToken !== 'string' || !isVisibleWord(refreshToken))
  ) {
    throw malformed(endpoint, '"refresh_token" must be a printable string without spaces');
  }
  return {
    ...(typeof refreshToken === 'string' ? { refreshToken } : {}),
    accessToken,
    tokenType: 'bearer',
    expiresInSeconds: parseLifetime(endpoint, 'expires_in', expiresIn),
    scope: typeof scope === 'string' && scope.trim() !== '' ? normalizeScope(scope) : undefined,
  };
}

/**
 * Validates a token info record (spec §2.4 and Doorkeeper 5): `resource_owner_id` integer, string
 * or null; `scope` an array of strings (a space-separated string is accepted too);
 * `expires_in_seconds` (spec) or `expires_in` (Doorkeeper 5) a whole number or null;
 * `application.uid` integer or string. Throws MmauthError `malformed_response` naming the bad field.
 */
export function parseTokenInfo(json: unknown, endpoint = 'the token info endpoint'): TokenInfo {
  if (!isRecord(json)) {
    throw malformed(endpoint, 'the body is not a JSON object');
  }
  const owner = json.resource_owner_id;
  if (
    owner !== null &&
    owner !== undefined &&
    !(typeof owner === 'number' && Number.isInteger(owner)) &&
    typeof owner !== 'string'
  ) {
    throw malformed(endpoint, '"resource_owner_id" must be an integer, a string or null');
  }
  const scopes = parseScopeList(endpoint, json.scope ?? json.scopes);
  const lifetimeField = 'expires_in_seconds' in json ? 'expires_in_seconds' : 'expires_in';
  const expiresInSeconds = parseLifetime(endpoint, lifetimeField, json[lifetimeField]) ?? null;
  let applicationUid: number | string | null = null;
  const application = json.application;
  if (application !== undefined && application !== null) {
    if (!isRecord(application)) {
      throw malformed(endpoint, '"application" must be an object');
    }
    const uid = application.uid;
    if (!(typeof uid === 'number' && Number.isInteger(uid)) && typeof uid !== 'string') {
      throw malformed(endpoint, '"application.uid" must be an integer or a string');
    }
    applicationUid = uid;
  }
  const createdAt = json.created_at;
  if (
    createdAt !== undefined &&
    createdAt !== null &&
    !(typeof createdAt === 'number' && Number.isInteger(createdAt))
  ) {
    throw malformed(endpoint, '"created_at" must be an integer (Unix seconds)');
  }
  return {
    resourceOwnerId: owner ?? null,
    scopes,
    expiresInSeconds,
    applicationUid,
    createdAt: typeof createdAt === 'number' ? createdAt : undefined,
  };
}

function parseScopeList(endpoint: string, value: unknown): string[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (typeof value === 'string') {
    // RFC 7662's space-separated form, accepted as well as Doorkeeper's array.
    if (value !== '' && !isVisibleAscii(value)) {
      throw malformed(endpoint, '"scope" must be printable ASCII scope tokens');
    }
    return splitScope(value);
  }
  if (
    !Array.isArray(value) ||
    !value.every((item): item is string => typeof item === 'string' && isVisibleAscii(item))
  ) {
    throw malformed(endpoint, '"scope" must be an array of strings');
  }
  return value;
}

/** Splits a space-separated scope string (RFC 6749 §3.3) into its scope tokens. */
export function splitScope(scope: string): string[] {
  return scope.split(/\s+/).filter((part) => part !== '');
}

/** Collapses runs of white space in a scope string (RFC 6749 §3.3) into single spaces. */
export function normalizeScope(scope: string): string {
  return splitScope(scope).join(' ');
}
