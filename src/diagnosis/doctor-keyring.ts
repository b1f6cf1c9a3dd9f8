import { credentialStoreSetting } from '../context.js';
import { hasErrorCode } from '../errors.js';
import type { ListedProfile } from '../store/profile-listing.js';
import type { ProfileStore } from '../store/profile-store.js';
import type { Check } from './doctor-checks.js';
import { nextStep } from '../settings/next-step.js';

const FALLBACK_FIX =
  'unlock the keyring or start a Secret Service (GNOME Keyring, KWallet, KeePassXC); or set MMAUTH_CREDENTIAL_STORE=file to keep credentials in the file on purpose';

/**
 * The keyring (README "Where credentials live"): whether it answers, which one, and whether this
 * profile's sealed credentials open. `readFailure` is what reading the profile threw, if anything.
 * A keyring profile that cannot be read fails; no keyring under `auto` only warns (the file is
 * used, with a notice), and under MMAUTH_CREDENTIAL_STORE=keyring fails.
 */
export async function checkKeyring(
  store: ProfileStore,
  profileName: string,
  profile: ListedProfile | undefined,
  readFailure: unknown,
  env: NodeJS.ProcessEnv,
): Promise<Check> {
  const name = 'keyring';
  const setting = credentialStoreSetting(env);
  const isInKeyring = profile?.credentialsIn === 'keyring';
  if (hasErrorCode(readFailure, 'credentials_lost')) {
    return {
      name,
      status: 'fail',
      detail: readFailure.message,
      fix: `run \`${nextStep(profile?.lastGrant, profileName)}\` to store them again`,
    };
  }
  try {
    await store.probeKeyring();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const mustHave = isInKeyring || setting === 'keyring';
    if (!mustHave && setting === 'file')
      return { name, status: 'ok', detail: `not used (MMAUTH_CREDENTIAL_STORE=file): ${reason}` };
    // Stored in the file on purpose (--insecure-storage): no keyring is no finding.
    if (!mustHave && profile?.credentialStore === 'file') {
      return {
        name,
        status: 'ok',
        detail: `not used: profile "${profileName}" keeps its credentials in the file, as asked (--insecure-storage); ${reason}`,
      };
    }
    return {
      name,
      status: mustHave || !hasErrorCode(error, 'keyring_unavailable') ? 'fail' : 'warn',
      detail: `${reason}${isInKeyring ? `; profile "${profileName}" keeps its credentials there` : '; credentials go to the config file in plain text'}`,
      fix: FALLBACK_FIX,
    };
  }
  const where = isInKeyring
    ? `profile "${profileName}": sealed, and its key opens them`
    : profile === undefined || (!profile.hasClientSecret && profile.token === undefined)
      ? `profile "${profileName}" stores no credentials yet`
      : `profile "${profileName}" keeps its credentials in the file${profile.credentialStore === 'file' ? ' (asked for)' : '; they move into the keyring at its next write'}`;
  return { name, status: 'ok', detail: `${store.keyringName} answers (MMAUTH_CREDENTIAL_STORE=${setting}); ${where}` };
}
