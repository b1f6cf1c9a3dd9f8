import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MmauthError } from '../errors.js';
import { resolveEndpoints } from '../oauth/endpoints.js';
import type { Profile } from '../store/profile.js';
import { writeNewFile } from '../util/private-file.js';
import { isVisibleWord } from '../util/visible-word.js';
import { DIRECTORY_FILE } from './profile-selection.js';
import { parseLoopbackRedirectUri } from './redirect-uri.js';
import { resolveScope } from './settings.js';

/** The settings a profile holds that a user may set: each given one is checked. */
export interface GivenProfileSettings {
  baseUrl?: string | undefined;
  clientId?: string | undefined;
  scope?: string | undefined;
  redirectUri?: string | undefined;
}

/**
 * The settings given, checked: a base URL by every command's rules (resolveEndpoints: https except
 * for loopback hosts), a client id of printable ASCII without spaces, scopes, a loopback redirect
 * URI (RFC 8252 §7.3). Throws their `usage`, `invalid_base_url` and `insecure_base_url` errors.
 */
export function checkedProfileSettings(given: GivenProfileSettings): Partial<Profile> {
  const settings: Partial<Profile> = {};
  if (given.baseUrl !== undefined) settings.baseUrl = resolveEndpoints(given.baseUrl).baseUrl;
  if (given.clientId !== undefined) {
    if (!isVisibleWord(given.clientId)) throw new MmauthError('usage', 'a client id is printable ASCII without spaces');
    settings.clientId = given.clientId;
  }
  if (given.scope !== undefined) settings.scope = resolveScope(given.scope, undefined, '');
  if (given.redirectUri !== undefined) settings.redirectUri = parseLoopbackRedirectUri(given.redirectUri).uri;
  return settings;
}

/**
 * Writes `dir`/.mmauth-profile naming `profileName` (the name and a newline, mode 0644, created
 * anew and never through a link: O_EXCL | O_NOFOLLOW after removing what was there) and returns
 * its path. Throws `usage` naming the path when it cannot be written.
 */
export function writeDirectoryFile(dir: string, profileName: string): string {
  const path = join(dir, DIRECTORY_FILE);
  try {
    rmSync(path, { force: true });
    // Readable by others (0644): it names a profile, no secret.
    writeNewFile(path, `${profileName}\n`, 0o644);
  } catch (error) {
    throw new MmauthError('usage', `cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return path;
}
