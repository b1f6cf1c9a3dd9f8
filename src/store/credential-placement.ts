import { isMmauthError } from '../errors.js';
import type { CredentialVault } from './credential-vault.js';
import { secretsOf, type CredentialStoreRecord, type Profile } from './profile.js';
import { bindingOf, presentFields, type CredentialBinding, type SealedSecrets } from './secrets.js';
import type { CredentialStoreSetting, WriteIntent } from './store-types.js';

/** The longest access token copied into the keyring, in characters (Windows: 2,560 bytes per credential, the binding included). */
const MAX_COPIED_TOKEN = 1800;

/** What was on disk for a profile before a write: its record, its access token and that token's keyring copy. */
export interface PriorCredentials {
  record: CredentialStoreRecord | undefined;
  accessToken: string | undefined;
  ref: string | undefined;
  /** What the prior copy was bound to. */
  binding: CredentialBinding;
}

/** Where a write puts a profile's credentials: the record to keep, the sealed form, the access token's keyring copy. */
export interface Placement {
  record: CredentialStoreRecord | undefined;
  sealed?: SealedSecrets;
  ref?: string | undefined;
}

/**
 * The store's placement rules (the project's rules; ARCHITECTURE.md "Where credentials live") over
 * `vault`, for the setting MMAUTH_CREDENTIAL_STORE gave (`setting`).
 */
export function createCredentialPlacement(vault: CredentialVault, setting: CredentialStoreSetting) {
  /**
   * Where a write's credentials go: the file (asked for, or a profile that chose it under `auto`),
   * the keyring or nothing (MMAUTH_CREDENTIAL_STORE=keyring, or a profile already in the keyring:
   * never a plain-text copy), or the keyring when there is one (`auto`, a new or fallen-back profile).
   */
  const destinationOf = (
    prior: CredentialStoreRecord | undefined,
    intent: WriteIntent,
  ): 'file' | 'keyring' | 'keyring_or_file' => {
    // Only a storing command's explicit choice takes credentials out of the keyring (attacks 15).
    if (intent.isStoring !== true && prior === 'keyring') return 'keyring';
    const chosen = intent.insecureStorage === true ? 'file' : setting;
    if (chosen === 'file' || (chosen === 'auto' && prior === 'file')) return 'file';
    return chosen === 'keyring' || prior === 'keyring' ? 'keyring' : 'keyring_or_file';
  };

  /**
   * Where `next`'s credentials go and in what form: sealed for the keyring, or plain text for the
   * file, with the record to keep. `prior` is the record on disk before this write.
   */
  const place = async (
    name: string,
    next: Profile,
    prior: PriorCredentials,
    keyIds: Iterable<string>,
    intent: WriteIntent,
  ): Promise<Placement> => {
    const secrets = secretsOf(next);
    if (presentFields(secrets).length === 0) return { record: prior.record };
    const destination = destinationOf(prior.record, intent);
    if (destination === 'file') {
      if (prior.record === 'keyring') intent.onLeaveKeyring?.();
      return { record: 'file' };
    }
    const binding = bindingOf(name, next.baseUrl, next.clientId);
    try {
      const sealed = await vault.seal(binding, secrets, keyIds);
      return { record: 'keyring', sealed, ref: await copyAccessToken(next, prior, binding) };
    } catch (error) {
      if (destination !== 'keyring_or_file' || !isMmauthError(error) || error.code !== 'keyring_unavailable')
        throw error;
      intent.onFileFallback?.(error.message);
      return { record: 'fallback' };
    }
  };

  /**
   * The keyring account of a copy of `next`'s access token (CredentialVault.putCopy), unless the
   * token is the one already copied: `token` then reads it with one keyring call and no cipher.
   * None for a token over 2,000 characters (Windows keeps at most 2,560 bytes).
   */
  const copyAccessToken = async (
    next: Profile,
    prior: PriorCredentials,
    binding: CredentialBinding,
  ): Promise<string | undefined> => {
    const accessToken = next.token?.accessToken;
    if (accessToken === undefined || accessToken.length > MAX_COPIED_TOKEN) return undefined;
    const isSameBinding = JSON.stringify(prior.binding) === JSON.stringify(binding);
    if (prior.ref !== undefined && prior.accessToken === accessToken && isSameBinding) return prior.ref;
    return vault.putCopy(accessToken, binding);
  };

  return { destinationOf, place };
}
