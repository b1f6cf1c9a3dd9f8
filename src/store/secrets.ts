/** A profile's credentials, the only values the store seals: each absent when the profile has none. */
export interface ProfileSecrets {
  clientSecret?: string | undefined;
  accessToken?: string | undefined;
  refreshToken?: string | undefined;
  /** The PKCE verifier of a pending two-step login (RFC 7636 §4.1). */
  codeVerifier?: string | undefined;
  /** Access tokens still to present once, space-separated, to retire the refresh tokens they replaced. */
  chainToRetire?: string | undefined;
  /** Tokens replaced without being ended, in encodeReplacedTokens' form. */
  replacedTokens?: string | undefined;
  /** The client secret given to `login --start`, for `--complete`. */
  pendingClientSecret?: string | undefined;
}

/** The on-disk names of the sealed fields, also listed in the clear so that `status` needs no key. */
export const SECRET_FIELDS = {
  clientSecret: 'client_secret',
  accessToken: 'access_token',
  refreshToken: 'refresh_token',
  codeVerifier: 'code_verifier',
  chainToRetire: 'chain_to_retire',
  replacedTokens: 'replaced_tokens',
  pendingClientSecret: 'pending_client_secret',
} as const satisfies Record<keyof ProfileSecrets, string>;
export type SecretField = (typeof SECRET_FIELDS)[keyof typeof SECRET_FIELDS];

/**
 * A profile's secrets encrypted with AES-256-GCM under a key kept in the OS keyring (the envelope
 * of wrangler's `--use-keyring`): `keyId` is the keyring account holding the key; `nonce` (12
 * bytes) and `ciphertext` (with its 16-byte tag appended) are base64url; `fields` names what is
 * inside, so that presence is known without the key.
 */
export interface SealedSecrets {
  keyId: string;
  nonce: string;
  ciphertext: string;
  fields: SecretField[];
  /**
   * The format: 2 binds the blob to everything that decides where its secrets go (profile name,
   * key id, the base URL's origin, the client id); 1 (written before) to the name and key id only.
   */
  version: 1 | 2;
}

/** What decides where a profile's secrets go: sealed blobs and token copies are bound to it. */
export interface CredentialBinding {
  profileName: string;
  /** The origin of the profile's base URL, or '' for none. */
  origin: string;
  /** The profile's client id, or '' for none. */
  clientId: string;
}

/** The binding of a profile (on-disk `base_url` and `client_id`) named `profileName`. */
export function bindingOf(
  profileName: string,
  baseUrl: string | undefined,
  clientId: string | undefined,
): CredentialBinding {
  let origin = '';
  try {
    origin = baseUrl === undefined ? '' : new URL(baseUrl).origin;
  } catch {
    origin = baseUrl ?? '';
  }
  return { profileName, origin, clientId: clientId ?? '' };
}

/** Whether two bindings name the same origin and client id (the profile name aside): credentials may move between them. */
export function isSameBinding(
  a: Pick<CredentialBinding, 'origin' | 'clientId'>,
  b: Pick<CredentialBinding, 'origin' | 'clientId'>,
): boolean {
  return a.origin === b.origin && a.clientId === b.clientId;
}

/** The length of a key, in bytes (AES-256). */
export const KEY_BYTES = 32;

/** The secrets that are set, as their on-disk names. */
export function presentFields(secrets: ProfileSecrets): SecretField[] {
  return (Object.keys(SECRET_FIELDS) as Array<keyof ProfileSecrets>)
    .filter((name) => secrets[name] !== undefined)
    .map((name) => SECRET_FIELDS[name]);
}
