import {
  callbackPathClashes,
  callbackPathClashWarning,
  callbackPathOf,
  type ClashProfile,
} from '../settings/callback-path-clash.js';
import { DEFAULT_CALLBACK_PATH } from '../settings/redirect-uri.js';
import type { ProfileStore } from '../store/store-types.js';
import type { Check } from './doctor-checks.js';

/**
 * The callback path check: a warning when another profile on another server listens on the same
 * path while either server sends no `iss` (callbackPathClashes: RFC 9700 §4.4.2's mix-up), else ok.
 */
export function checkCallbackPath(
  store: ProfileStore,
  profileName: string,
  baseUrl: string,
  settings: ClashProfile | undefined,
): Check {
  const callbackPath = settings === undefined ? DEFAULT_CALLBACK_PATH : callbackPathOf(settings);
  let clashes: string[] = [];
  try {
    clashes = callbackPathClashes(store.list(), {
      name: profileName,
      baseUrl,
      callbackPath,
      serverMetadata: settings?.serverMetadata,
    });
  } catch {
    // A config file that cannot be listed is the config check's finding.
  }
  const warning = callbackPathClashWarning(clashes, callbackPath, profileName);
  return warning === undefined
    ? { name: 'callback path', status: 'ok', detail: `${callbackPath} (no profile of another server shares it)` }
    : { name: 'callback path', status: 'warn', detail: warning };
}
