import { MmauthError } from '../errors.js';
import type { Keyring } from './keyring.js';
import { KEY_BYTES, type ProfileSecrets, type SealedSecrets } from './secrets.js';

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
   * The secrets sealed for `profileName`. Throws `credentials_lost` when the keyring answers that
   * the key is gone or the key does not open the blob; `keyring_unavailable`/`keyring_failed` when
   * the keyring cannot be asked.
   */
  open(profileName: string, sealed: SealedSecrets): Promise<ProfileSecrets>;
  /**
   * Seals `secrets` for `profileName` with the first of `keyIds` the keyring still holds, or with
   * a new key stored in the keyring first. Throws `keyring_unavailable`/`keyring_failed`.
   */
  seal(profileName: string, secrets: ProfileSecrets, keyIds: Iterable<string>): Promise<SealedSecrets>;
  /** The access token copied under `account` (putCopy), or undefined when the keyring has none. */
  getCopy(account: string): Promise<string | undefined>;
  /**
   * Keeps a copy of `accessToken` in the keyring under a new account, `access-token.` and 128
   * random bits, and returns that account. Throws `keyring_unavailable`/`keyring_failed`.
   */
  putCopy(accessToken: string): Promise<string>;
  /** Asks the keyring once (a read of an account mmauth never writes). Throws `keyring_unavailable`/`keyring_failed`. */
  check(): Promise<void>;
  /** Removes these accounts (keys, items) from the keyring once nothing uses them. Throws keyring errors. */
  forget(keyIds: Iterable<string>): Promise<void>;
}

function decodeKey(value: string): Buffer | undefined {
  const key = Buffer.from(value, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

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
    if (keys.has(keyId)) return keys.get(keyId);
    const value = await (await theKeyring()).get(keyId);
    const key = value === undefined ? undefined : decodeKey(value);
    keys.set(keyId, key);
    return key;
  };
  const lost = (profileName: string, why: string) =>
    new MmauthError(
      'credentials_lost',
      `the stored credentials of profile "${profileName}" cannot be read: ${why} (the keyring was cleared, or this config file came from another machine)`,
    );
  return {
    keyringName,
    async open(profileName, sealed) {
      const [key, { openSealed }] = await Promise.all([readKey(sealed.keyId), cipher()]);
      if (key === undefined) throw lost(profileName, `their key is not in the ${keyringName}`);
      const secrets = openSealed(sealed, profileName, key);
      if (secrets === undefined) throw lost(profileName, `the key in the ${keyringName} does not open them`);
      return secrets;
    },
    async seal(profileName, secrets, keyIds) {
      const { sealSecrets } = await cipher();
      for (const keyId of new Set(keyIds)) {
        const key = await readKey(keyId);
        if (key !== undefined) return sealSecrets(secrets, profileName, keyId, key);
      }
      // A key id: 128 random bits in hex, the keyring account of its key.
      const keyId = (await randomBytes(16)).toString('hex');
      const key = await randomBytes(KEY_BYTES);
      await (await theKeyring()).set(keyId, key.toString('base64'));
      keys.set(keyId, key);
      return sealSecrets(secrets, profileName, keyId, key);
    },
    getCopy: async (account) => (await theKeyring()).get(account),
    async putCopy(accessToken) {
      const account = `access-token.${(await randomBytes(16)).toString('hex')}`;
      await (await theKeyring()).set(account, accessToken);
      return account;
    },
    async check() {
      await (await theKeyring()).get('mmauth-check');
    },
    async forget(keyIds) {
      for (const keyId of new Set(keyIds)) {
        await (await theKeyring()).delete(keyId);
        keys.set(keyId, undefined);
      }
    },
  };
}
