import { callbackPathClashes, callbackPathClashWarning } from '../../settings/callback-path-clash.js';
import type { CachedServerMetadata } from '../../store/profile.js';
import type { ProfileStore } from '../../store/store-types.js';
import type { Output } from '../../ui/output.js';

/**
 * Warns, before the browser opens, when another profile on another server listens on the same
 * callback path while either server sends no `iss` (callbackPathClashes: RFC 9700 §4.4.2's mix-up).
 * A config file that cannot be listed warns of nothing: the login itself says what is wrong with it.
 */
export function warnOfCallbackPathClash(
  store: ProfileStore,
  self: { name: string; baseUrl: string; callbackPath: string; serverMetadata: CachedServerMetadata | undefined },
  out: Output,
): void {
  let profiles: ReturnType<ProfileStore['list']>;
  try {
    profiles = store.list();
  } catch {
    return;
  }
  const warning = callbackPathClashWarning(callbackPathClashes(profiles, self), self.callbackPath, self.name);
  if (warning !== undefined) out.warn(warning);
}
