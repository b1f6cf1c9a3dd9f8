import { MmauthError } from '../errors.js';
import { TOKEN_ORIGINS, type TokenOrigin } from '../oauth/wire.js';
import { isRecord } from '../util/is-record.js';

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
  token: StoredToken | undefined;
  /** How the profile's latest token was obtained, kept after the token is gone (for the next step). */
  lastGrant: TokenOrigin | undefined;
  /** A login started with `login --start`, waiting for `--complete` (its verifier is a secret). */
  pendingLogin?: PendingLogin | undefined;
}

/** An authorization request waiting for its response (two-step login): what `--complete` checks against. */
export interface PendingLogin {
  url: string;
  state: string;
  codeVerifier: string;
  redirectUri: string;
  responseType: 'code' | 'token';
  clientId: string;
  scope: string;
  /** ISO 8601; past it, `--complete` refuses. */
  expiresAt: string;
}

function parsePending(json: unknown, where: string): PendingLogin | undefined {
  if (json === undefined || json === null) return undefined;
  if (!isRecord(json)) throw new ProfileFormatError(`${where} must be an object`);
  const responseType = requiredString(json, 'response_type', where);
  if (responseType !== 'code' && responseType !== 'token')
    throw new ProfileFormatError(`${where}.response_type is unknown`);
  return {
    url: requiredString(json, 'url', where),
    state: requiredString(json, 'state', where),
    codeVerifier: requiredString(json, 'code_verifier', where),
    redirectUri: requiredString(json, 'redirect_uri', where),
    responseType,
    clientId: requiredString(json, 'client_id', where),
    scope: requiredString(json, 'scope', where),
    expiresAt: requiredString(json, 'expires_at', where),
  };
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

/** Thrown by parseProfile for a field of the wrong shape; the store adds the file name. */
export class ProfileFormatError extends Error {}

function optionalString(record: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new ProfileFormatError(`${where}.${key} must be a string`);
  }
  return value;
}

function requiredString(record: Record<string, unknown>, key: string, where: string): string {
  const value = optionalString(record, key, where);
  if (value === undefined) {
    throw new ProfileFormatError(`${where}.${key} is missing`);
  }
  return value;
}

/** Reads one profile from its on-disk JSON form (snake_case keys). Throws ProfileFormatError. */
export function parseProfile(json: unknown, where: string): Profile {
  if (!isRecord(json)) {
    throw new ProfileFormatError(`${where} must be an object`);
  }
  let token: StoredToken | undefined;
  if (json.token !== undefined && json.token !== null) {
    const t = json.token;
    if (!isRecord(t)) {
      throw new ProfileFormatError(`${where}.token must be an object`);
    }
    const grant = requiredString(t, 'grant', `${where}.token`);
    const knownGrant = TOKEN_ORIGINS.find((g) => g === grant);
    if (knownGrant === undefined) {
      throw new ProfileFormatError(`${where}.token.grant "${grant}" is unknown`);
    }
    token = {
      accessToken: requiredString(t, 'access_token', `${where}.token`),
      tokenType: requiredString(t, 'token_type', `${where}.token`),
      scope: optionalString(t, 'scope', `${where}.token`),
      grant: knownGrant,
      obtainedAt: requiredString(t, 'obtained_at', `${where}.token`),
      expiresAt: optionalString(t, 'expires_at', `${where}.token`),
      refreshToken: optionalString(t, 'refresh_token', `${where}.token`),
    };
  }
  return {
    baseUrl: optionalString(json, 'base_url', where),
    clientId: optionalString(json, 'client_id', where),
    clientSecret: optionalString(json, 'client_secret', where),
    scope: optionalString(json, 'scope', where),
    redirectUri: optionalString(json, 'redirect_uri', where),
    lastGrant: token?.grant ?? TOKEN_ORIGINS.find((origin) => origin === json.last_grant),
    pendingLogin: parsePending(json.pending_login, `${where}.pending_login`),
    token,
  };
}

/** The on-disk JSON form of a profile: snake_case keys, undefined fields left out. */
export function serializeProfile(profile: Profile): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) {
      out[key] = value;
    }
  };
  put('base_url', profile.baseUrl);
  put('client_id', profile.clientId);
  put('client_secret', profile.clientSecret);
  put('scope', profile.scope);
  put('redirect_uri', profile.redirectUri);
  put('last_grant', profile.token?.grant ?? profile.lastGrant);
  const pending = profile.pendingLogin;
  if (pending !== undefined) {
    out.pending_login = {
      url: pending.url,
      state: pending.state,
      code_verifier: pending.codeVerifier,
      redirect_uri: pending.redirectUri,
      response_type: pending.responseType,
      client_id: pending.clientId,
      scope: pending.scope,
      expires_at: pending.expiresAt,
    };
  }
  if (profile.token !== undefined) {
    const t = profile.token;
    const token: Record<string, unknown> = {
      access_token: t.accessToken,
      token_type: t.tokenType,
      grant: t.grant,
      obtained_at: t.obtainedAt,
    };
    if (t.scope !== undefined) token.scope = t.scope;
    if (t.expiresAt !== undefined) token.expires_at = t.expiresAt;
    if (t.refreshToken !== undefined) token.refresh_token = t.refreshToken;
    out.token = token;
  }
  return out;
}
