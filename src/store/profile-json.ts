import { TOKEN_ORIGINS } from '../oauth/wire.js';
import { isRecord } from '../util/is-record.js';
import { instant, ProfileFormatError, splitChain, word } from './stored-values.js';
import {
  decodeReplacedTokens,
  encodeReplacedTokens,
  type CredentialStoreRecord,
  type PendingLogin,
  type Profile,
  type StoredToken,
} from './profile.js';
import { SECRET_FIELDS, type ProfileSecrets, type SealedSecrets, type SecretField } from './secrets.js';
import { parseServerMetadata, serverMetadataJson } from './server-metadata-record.js';
// A profile's on-disk JSON (snake_case): parsed, sealed secrets opened or left out; serialized, sealed or plain.

function optionalString(record: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ProfileFormatError(`${where}.${key} must be a string`);
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
    version: sealed.v === 2 ? 2 : 1,
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
      accessToken: word(
        secretField(t, 'accessToken', `${where}.token`, sealing, true) ?? '',
        `${where}.token.access_token`,
      ),
      tokenType: word(requiredString(t, 'token_type', `${where}.token`), `${where}.token.token_type`),
      scope: optionalString(t, 'scope', `${where}.token`),
      grant: knownGrant,
      obtainedAt: instant(requiredString(t, 'obtained_at', `${where}.token`), `${where}.token.obtained_at`),
      expiresAt: instant(optionalString(t, 'expires_at', `${where}.token`), `${where}.token.expires_at`),
      refreshToken: word(secretField(t, 'refreshToken', `${where}.token`, sealing), `${where}.token.refresh_token`),
      verifiedAt: instant(optionalString(t, 'verified_at', `${where}.token`), `${where}.token.verified_at`),
      ...(t.shared === true ? { isShared: true } : {}),
      ...(t.device === true ? { viaDevice: true } : {}),
    };
  }
  const lastGrant = isRecord(json.token) ? json.token.grant : json.last_grant;
  const baseUrl = optionalString(json, 'base_url', where);
  // A base URL that is no URL is a malformed file, said where (attacks W15), never an unexpected failure later.
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) throw new ProfileFormatError(`${where}.base_url is not a URL`);
  return {
    baseUrl,
    clientId: optionalString(json, 'client_id', where),
    clientSecret: secretField(json, 'clientSecret', where, sealing),
    scope: optionalString(json, 'scope', where),
    redirectUri: optionalString(json, 'redirect_uri', where),
    callbackPath: optionalString(json, 'callback_path', where),
    deviceAuthorizationUrl: optionalString(json, 'device_authorization_url', where),
    lastGrant: token?.grant ?? TOKEN_ORIGINS.find((origin) => origin === lastGrant),
    pendingLogin:
      sealing.kind === 'omitted' ? undefined : parsePending(json.pending_login, `${where}.pending_login`, sealing),
    credentialStore: parseRecord(json),
    chainToRetire: splitChain(secretField(json, 'chainToRetire', where, sealing)),
    replacedTokens: decodeReplacedTokens(secretField(json, 'replacedTokens', where, sealing)),
    serverMetadata: parseServerMetadata(json.server_metadata),
    token,
  };
}

function parsePending(json: unknown, where: string, sealed: Sealing): PendingLogin | undefined {
  if (json === undefined || json === null) return undefined;
  if (!isRecord(json)) throw new ProfileFormatError(`${where} must be an object`);
  const responseType = requiredString(json, 'response_type', where);
  if (responseType !== 'code' && responseType !== 'token' && responseType !== 'device')
    throw new ProfileFormatError(`${where}.response_type is unknown`);
  return {
    url: requiredString(json, 'url', where),
    state: requiredString(json, 'state', where),
    codeVerifier: secretField(json, 'codeVerifier', where, sealed, true) ?? '',
    redirectUri: requiredString(json, 'redirect_uri', where),
    responseType,
    clientId: requiredString(json, 'client_id', where),
    clientSecret: secretField(json, 'pendingClientSecret', where, sealed),
    scope: requiredString(json, 'scope', where),
    expiresAt: requiredString(json, 'expires_at', where),
    deviceIntervalS: typeof json.device_interval === 'number' ? json.device_interval : undefined,
  };
}

/** The `access_token_ref` of a profile's stored token, if it has one. */
export function accessTokenRefOf(json: unknown): string | undefined {
  if (!isRecord(json) || !isRecord(json.token)) return undefined;
  const ref = json.token.access_token_ref;
  return typeof ref === 'string' ? ref : undefined;
}

/**
 * The on-disk JSON form of a profile: snake_case keys, undefined fields left out. With `sealed`,
 * its secrets are written only inside it (sealSecrets), never in plain text, and
 * `accessTokenRef` names the keyring account that holds a copy of the access token.
 */
export function serializeProfile(
  profile: Profile,
  sealed?: SealedSecrets,
  accessTokenRef?: string,
): Record<string, unknown> {
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
  put('callback_path', profile.callbackPath);
  put('device_authorization_url', profile.deviceAuthorizationUrl);
  put('last_grant', profile.token?.grant ?? profile.lastGrant);
  if (profile.chainToRetire?.length) put('chain_to_retire', secret(profile.chainToRetire.join(' ')));
  put('replaced_tokens', secret(encodeReplacedTokens(profile.replacedTokens)));
  if (profile.serverMetadata !== undefined) out.server_metadata = serverMetadataJson(profile.serverMetadata);
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
      pending_client_secret: secret(pending.clientSecret),
      scope: pending.scope,
      expires_at: pending.expiresAt,
      device_interval: pending.deviceIntervalS,
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
    if (t.verifiedAt !== undefined) token.verified_at = t.verifiedAt;
    if (t.isShared === true) token.shared = true;
    if (t.viaDevice === true) token.device = true;
    if (t.refreshToken !== undefined && sealed === undefined) token.refresh_token = t.refreshToken;
    if (sealed !== undefined && accessTokenRef !== undefined) token.access_token_ref = accessTokenRef;
    out.token = token;
  }
  if (sealed !== undefined) {
    out.sealed = {
      v: sealed.version,
      key_id: sealed.keyId,
      nonce: sealed.nonce,
      ciphertext: sealed.ciphertext,
      fields: sealed.fields,
    };
  }
  return out;
}
