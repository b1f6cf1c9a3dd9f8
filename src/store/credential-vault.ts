import { MmauthError } from '../errors.js';
import type { Keyring } from './keyring.js';
import { KEY_BYTES, type CredentialBinding, type ProfileSecrets, type SealedSecrets } from './secrets.js';

/** The cipher, loaded at the first sealed profile (start-up and `token`'s read of a copy load no crypto). */
const cipher = () => import('./sealed-secrets.js');
/** `bytes` random bytes (node:crypto's CSPRNG, loaded with the cipher). */
const randomBytes = async (bytes: number): Promise<Buffer> => (await import('node:crypto')).randomBytes(bytes);

/**
 * Seals and opens profiles' secrets with keys kept in the OS keyring (ARCHITECTURE.md "Where
 * credentials live"). The keyring holds only keys: a random 256-bit key per key id (the keyring
 * account), shared by the profiles sealed with it; the sealed secrets stay in the config file, so
 * the store's lock, atomic writes and single-flight renewal are unchanged.
 */
export interface CredentialVault {
  /** The keyring's name, for people. */
  readonly keyringName: string;
  /**
   * The secrets sealed for the profile of `binding` (its name, origin and client id as the file
   * gives them). Throws `credentials_lost` when the keyring answers that the key is gone, the key
   * id is not one mmauth makes, or the key does not open the blob (another binding: the file was
   * edited); `keyring_unavailable`/`keyring_failed` when the keyring cannot be asked.
   */
  open(binding: CredentialBinding, sealed: SealedSecrets): Promise<ProfileSecrets>;
  /**
   * Seals `secrets` for `binding` with the first of `keyIds` the keyring still holds as a key, or
   * with a new key stored in the keyring first. Throws `keyring_unavailable`/`keyring_failed`.
   */
  seal(binding: CredentialBinding, secrets: ProfileSecrets, keyIds: Iterable<string>): Promise<SealedSecrets>;
  /** The access token copied under `account` (putCopy) for `binding`, or undefined when there is none for it. */
  getCopy(account: string, binding: CredentialBinding): Promise<string | undefined>;
  /**
   * Keeps a copy of `accessToken`, bound to `binding`, in the keyring under a new account
   * (`access-token.` and 128 random bits, of kind `copy`), and returns that account. Throws
   * `keyring_unavailable`/`keyring_failed`.
   */
  putCopy(accessToken: string, binding: CredentialBinding): Promise<string>;
  /**
   * Proves the keyring takes writes: stores and removes an item of account `mmauth-check` (a keyring
   * with no default collection answers reads). Throws `keyring_unavailable`/`keyring_failed`.
   */
  check(): Promise<void>;
  /**
   * Removes these token copies from the keyring once nothing uses them. Keys are never removed:
   * another copy of the config directory may still need one. Throws keyring errors.
   */
  forget(accounts: Iterable<string>): Promise<void>;
}

/** Whether `keyId` is a key id mmauth makes (128 random bits in hex); a planted name is no key. */
export function isKeyId(keyId: string): boolean {
  return /^[0-9a-f]{32}$/.test(keyId);
}

/** Whether `account` names a token copy (putCopy). */
export function isCopyAccount(account: string): boolean {
  return /^access-token\.[0-9a-f]{32}$/.test(account);
}

/** A copy's stored form: the token with the binding it belongs to. */
function copyValue(accessToken: string, binding: CredentialBinding): string {
  return JSON.stringify({
    v: 2,
    profile: binding.profileName,
    origin: binding.origin,
    client_id: binding.clientId,
    token: accessToken,
  });
}

/** The token of a copy's stored form when it belongs to `binding`; undefined otherwise (a copy of another profile, or of an older format). */
function copyToken(value: string | undefined, binding: CredentialBinding): string | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as Record<string, unknown>;
    const isOwn =
      parsed.v === 2 &&
      parsed.profile === binding.profileName &&
      parsed.origin === binding.origin &&
      parsed.client_id === binding.clientId;
    return isOwn && typeof parsed.token === 'string' ? parsed.token : undefined;
  } catch {
    return undefined;
  }
}

function decodeKey(value: string): Buffer | undefined {
  const key = Buffer.from(value, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

/** What sealed credentials are when their key cannot open them, and why when the key is gone. */
/** The account of check()'s probe item, removed as soon as it is written. */
const CHECK_ACCOUNT = 'mmauth-check';
const UNREADABLE = 'stored, but unreadable';
const KEY_MISSING = 'its key is not in the keyring';

/** How status, doctor, logout and every failed read say that sealed credentials lost their key. */
export const LOST_KEY = `${UNREADABLE}: ${KEY_MISSING}`;

/**
 * A vault over the keyring `openKeyring` gives, opened at first use and at most once per process
 * (a failure to open is remembered, so one command asks once). Keys read or made are cached for
 * the process.
 */
export function createCredentialVault(keyringName: string, openKeyring: () => Promise<Keyring>): CredentialVault {
  let keyring: Promise<Keyring> | undefined;
  const keys = new Map<string, Buffer | undefined>();
  const theKeyring = () => (keyring ??= openKeyring());
  const readKey = async (keyId: string): Promise<Buffer | undefined> => {
    if (!isKeyId(keyId)) return undefined;
    if (keys.has(keyId)) return keys.get(keyId);
    const value = await (await theKeyring()).get(keyId, 'key');
    const key = value === undefined ? undefined : decodeKey(value);
    keys.set(keyId, key);
    return key;
  };
  const lost = (profileName: string, why: string) =>
    new MmauthError(
      'credentials_lost',
      `the credentials of profile "${profileName}" are ${UNREADABLE}: ${why} (${keyringName}: it was cleared, or this config file came from another machine)`,
    );
  return {
    keyringName,
    async open(binding, sealed) {
      const { profileName } = binding;
      const [key, { openSealed }] = await Promise.all([readKey(sealed.keyId), cipher()]);
      if (key === undefined) throw lost(profileName, KEY_MISSING);
      const secrets = openSealed(sealed, binding, key);
      if (secrets === undefined) {
        throw lost(profileName, 'the key in the keyring does not open them for this profile, server and client');
      }
      return secrets;
    },
    async seal(binding, secrets, keyIds) {
      const { sealSecrets } = await cipher();
      for (const keyId of new Set(keyIds)) {
        const key = await readKey(keyId);
        if (key !== undefined) return sealSecrets(secrets, binding, keyId, key);
      }
      // A key id: 128 random bits in hex, the keyring account of its key.
      const keyId = (await randomBytes(16)).toString('hex');
      const key = await randomBytes(KEY_BYTES);
      await (await theKeyring()).set(keyId, key.toString('base64'), 'key');
      keys.set(keyId, key);
      return sealSecrets(secrets, binding, keyId, key);
    },
    getCopy: async (account, binding) =>
      isCopyAccount(account) ? copyToken(await (await theKeyring()).get(account, 'copy'), binding) : undefined,
    async putCopy(accessToken, binding) {
      const account = `access-token.${(await randomBytes(16)).toString('hex')}`;
      await (await theKeyring()).set(account, copyValue(accessToken, binding), 'copy');
      return account;
    },
    async check() {
      // A write, not a read: a keyring with no default collection answers reads and refuses every write.
      const keyring = await theKeyring();
      await keyring.set(CHECK_ACCOUNT, 'ok', 'key');
      await keyring.delete(CHECK_ACCOUNT, 'key');
    },
    async forget(accounts) {
      for (const account of new Set(accounts)) {
        if (!isCopyAccount(account)) continue;
        await (await theKeyring()).delete(account, 'copy');
        // A copy written before copies had a service of their own.
        await (await theKeyring()).delete(account, 'key');
      }
    },
  };
}
