import type { ProfileStore, WriteIntent } from '../store/profile-store.js';

/** Options of the commands that store credentials (login, client-credentials). */
export interface StorageOptions {
  /** `--insecure-storage` (gh's name): keep this profile's credentials in the config file, in plain text. */
  insecureStorage?: boolean;
}

/**
 * The WriteIntent of a command that stores credentials for `profileName`, checked first: when
 * they must go to the keyring and it cannot take them, this throws (`keyring_unavailable`,
 * `keyring_failed`, exit 1) before any request, so nothing is half done. When, under `auto`, no
 * keyring can be used, the store writes the file and this says so on stderr, once, with the path,
 * the reason and how to silence it (README "Where credentials live"); renewal never says it.
 */
export async function prepareStoring(
  options: StorageOptions,
  store: ProfileStore,
  profileName: string,
  out: { warn(line: string): void; instruct(line: string): void },
): Promise<WriteIntent> {
  const insecureStorage = options.insecureStorage === true;
  await store.assertCanStore(profileName, { insecureStorage });
  // Once per profile: one that already fell back to the file was told then (login --start, then --complete).
  let isSaid = store.listOne(profileName)?.credentialStore === 'fallback';
  return {
    insecureStorage,
    isStoring: true,
    onLeaveKeyring: () =>
      out.warn(
        `credentials of profile "${profileName}" moved out of the keyring into ${store.path} in plain text (mode 0600), as asked`,
      ),
    onFileFallback: (reason) => {
      if (isSaid) return;
      isSaid = true;
      // The keyring's own long explanation is doctor's to show; here, the reason in words (describeKeyringError).
      const short = reason.replace(/\s*\([^()]*\)\s*$/, '');
      out.warn(`profile "${profileName}": credentials in plain text in ${store.path} (0600): ${short}`);
      out.instruct('  MMAUTH_CREDENTIAL_STORE=file keeps them there without this notice; =keyring refuses instead');
    },
  };
}
