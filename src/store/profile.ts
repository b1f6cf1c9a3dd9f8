import { MmauthError } from '../errors.js';
import { TOKEN_ORIGINS, type TokenOrigin } from '../oauth/wire.js';
import { isRecord } from '../util/is-record.js';
import { SECRET_FIELDS, type ProfileSecrets, type SealedSecrets, type SecretField } from './secrets.js';

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
  /** Where its credentials are kept; the store sets it at each write. */
  credentialStore?: CredentialStoreRecord | undefined;
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

function parsePending(json: unknown, where: string, sealed: Sealing): PendingLogin | undefined {
  if (json === undefined || json === null) return undefined;
  if (!isRecord(json)) throw new ProfileFormatError(`${where} must be an object`);
  const responseType = requiredString(json, 'response_type', where);
  if (responseType !== 'code' && responseType !== 'token')
    throw new ProfileFormatError(`${where}.response_type is unknown`);
  return {
    url: requiredString(json, 'url', where),
    state: requiredString(json, 'state', where),
    codeVerifier: secretField(json, 'codeVerifier', where, sealed, true) ?? '',
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

/**
 * How a profile's secrets are read while parsing: from the JSON itself (plain), from what the
 * vault opened (`secrets`), or not at all (`omitted`: sealed secrets left unread or lost; the
 * token and pending login, which cannot stand without theirs, are left out with them).
 */
type Sealing = { kind: 'plain' } | { kind: 'opened'; secrets: ProfileSecrets } | { kind: 'omitted' };

/** A secret field: from the JSON when plain, else from the opened secrets; undefined when omitted. */
function secretField(
  record: Record<string, unknown>,
  name: keyof ProfileSecrets,
  where: string,
  sealing: Sealing,
  isRequired = false,
): string | undefined {
  const value =
    sealing.kind === 'plain'
      ? optionalString(record, SECRET_FIELDS[name], where)
      : sealing.kind === 'opened'
        ? sealing.secrets[name]
        : undefined;
  if (value === undefined && isRequired && sealing.kind !== 'omitted') {
    throw new ProfileFormatError(`${where}.${SECRET_FIELDS[name]} is missing`);
  }
  return value;
}

/** The `sealed` member of a profile's JSON, or undefined when its secrets are in plain text. Throws ProfileFormatError. */
export function parseSealed(json: unknown, where: string): SealedSecrets | undefined {
  if (!isRecord(json) || json.sealed === undefined || json.sealed === null) return undefined;
  const sealed = json.sealed;
  if (!isRecord(sealed)) throw new ProfileFormatError(`${where}.sealed must be an object`);
  const known = Object.values(SECRET_FIELDS) as string[];
  const fields = Array.isArray(sealed.fields) ? sealed.fields : undefined;
  if (fields === undefined || !fields.every((field) => typeof field === 'string' && known.includes(field))) {
    throw new ProfileFormatError(`${where}.sealed.fields must list secret field names`);
  }
  return {
    keyId: requiredString(sealed, 'key_id', `${where}.sealed`),
    nonce: requiredString(sealed, 'nonce', `${where}.sealed`),
    ciphertext: requiredString(sealed, 'ciphertext', `${where}.sealed`),
    fields: fields as SecretField[],
  };
}

function parseRecord(json: Record<string, unknown>): CredentialStoreRecord | undefined {
  if (json.credential_store === 'keyring') return 'keyring';
  if (json.credential_store === 'file') return json.credential_store_fallback === true ? 'fallback' : 'file';
  return undefined;
}

/**
 * Reads one profile from its on-disk JSON form (snake_case keys). A profile with `sealed` secrets
 * needs them opened (`secrets`); without them, its client secret, token and pending login are left
 * out. Throws ProfileFormatError.
 */
export function parseProfile(json: unknown, where: string, secrets?: ProfileSecrets): Profile {
  if (!isRecord(json)) {
    throw new ProfileFormatError(`${where} must be an object`);
  }
  const sealing: Sealing =
    json.sealed === undefined || json.sealed === null
      ? { kind: 'plain' }
      : secrets === undefined
        ? { kind: 'omitted' }
        : { kind: 'opened', secrets };
  let token: StoredToken | undefined;
  if (json.token !== undefined && json.token !== null && sealing.kind !== 'omitted') {
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
      accessToken: secretField(t, 'accessToken', `${where}.token`, sealing, true) ?? '',
      tokenType: requiredString(t, 'token_type', `${where}.token`),
      scope: optionalString(t, 'scope', `${where}.token`),
      grant: knownGrant,
      obtainedAt: requiredString(t, 'obtained_at', `${where}.token`),
      expiresAt: optionalString(t, 'expires_at', `${where}.token`),
      refreshToken: secretField(t, 'refreshToken', `${where}.token`, sealing),
    };
  }
  const lastGrant = isRecord(json.token) ? json.token.grant : json.last_grant;
  return {
    baseUrl: optionalString(json, 'base_url', where),
    clientId: optionalString(json, 'client_id', where),
    clientSecret: secretField(json, 'clientSecret', where, sealing),
    scope: optionalString(json, 'scope', where),
    redirectUri: optionalString(json, 'redirect_uri', where),
    lastGrant: token?.grant ?? TOKEN_ORIGINS.find((origin) => origin === lastGrant),
    pendingLogin:
      sealing.kind === 'omitted' ? undefined : parsePending(json.pending_login, `${where}.pending_login`, sealing),
    credentialStore: parseRecord(json),
    token,
  };
}

/** A stored token as `status` lists it: everything but the secrets' values. */
export interface ListedToken extends Omit<StoredToken, 'accessToken' | 'refreshToken'> {
  /** The access token when it is kept in plain text; undefined when sealed. */
  plainAccessToken: string | undefined;
  hasRefreshToken: boolean;
}

/** A profile as `status` lists it, read without opening sealed secrets: whether each is there, not its value. */
export interface ListedProfile extends Omit<Profile, 'clientSecret' | 'token' | 'pendingLogin'> {
  token: ListedToken | undefined;
  hasClientSecret: boolean;
  /** Where its credentials are: `keyring` (sealed, the key in the keyring) or `file` (plain text). */
  credentialsIn: 'keyring' | 'file';
}

/** Lists one profile from its on-disk JSON form without its secrets' values. Throws ProfileFormatError. */
export function listProfile(json: unknown, where: string): ListedProfile {
  const sealed = parseSealed(json, where);
  const present = (field: SecretField) => (sealed?.fields.includes(field) === true ? '' : undefined);
  const placeholders: ProfileSecrets = {
    clientSecret: present('client_secret'),
    accessToken: present('access_token'),
    refreshToken: present('refresh_token'),
    codeVerifier: present('code_verifier'),
  };
  const { clientSecret, token, pendingLogin: _pending, ...rest } = parseProfile(json, where, placeholders);
  return {
    ...rest,
    token:
      token === undefined
        ? undefined
        : {
            tokenType: token.tokenType,
            scope: token.scope,
            grant: token.grant,
            obtainedAt: token.obtainedAt,
            expiresAt: token.expiresAt,
            plainAccessToken: sealed === undefined ? token.accessToken : undefined,
            hasRefreshToken: token.refreshToken !== undefined,
          },
    hasClientSecret: clientSecret !== undefined,
    credentialsIn: sealed !== undefined || rest.credentialStore === 'keyring' ? 'keyring' : 'file',
  };
}

/** The secrets a profile holds. */
export function secretsOf(profile: Profile): ProfileSecrets {
  return {
    clientSecret: profile.clientSecret,
    accessToken: profile.token?.accessToken,
    refreshToken: profile.token?.refreshToken,
    codeVerifier: profile.pendingLogin?.codeVerifier,
  };
}

/**
 * The on-disk JSON form of a profile: snake_case keys, undefined fields left out. With `sealed`,
 * its secrets are written only inside it (sealSecrets), never in plain text.
 */
export function serializeProfile(profile: Profile, sealed?: SealedSecrets): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) {
      out[key] = value;
    }
  };
  const secret = (value: string | undefined) => (sealed === undefined ? value : undefined);
  put('base_url', profile.baseUrl);
  put('client_id', profile.clientId);
  put('client_secret', secret(profile.clientSecret));
  put('scope', profile.scope);
  put('redirect_uri', profile.redirectUri);
  put('last_grant', profile.token?.grant ?? profile.lastGrant);
  if (profile.credentialStore !== undefined) {
    put('credential_store', profile.credentialStore === 'keyring' ? 'keyring' : 'file');
    if (profile.credentialStore === 'fallback') put('credential_store_fallback', true);
  }
  const pending = profile.pendingLogin;
  if (pending !== undefined) {
    const pendingJson: Record<string, unknown> = {
      url: pending.url,
      state: pending.state,
      code_verifier: secret(pending.codeVerifier),
      redirect_uri: pending.redirectUri,
      response_type: pending.responseType,
      client_id: pending.clientId,
      scope: pending.scope,
      expires_at: pending.expiresAt,
    };
    if (sealed !== undefined) delete pendingJson.code_verifier;
    out.pending_login = pendingJson;
  }
  if (profile.token !== undefined) {
    const t = profile.token;
    const token: Record<string, unknown> = {};
    if (sealed === undefined) token.access_token = t.accessToken;
    token.token_type = t.tokenType;
    token.grant = t.grant;
    token.obtained_at = t.obtainedAt;
    if (t.scope !== undefined) token.scope = t.scope;
    if (t.expiresAt !== undefined) token.expires_at = t.expiresAt;
    if (t.refreshToken !== undefined && sealed === undefined) token.refresh_token = t.refreshToken;
    out.token = token;
  }
  if (sealed !== undefined) {
    out.sealed = { key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, fields: sealed.fields };
  }
  return out;
}
