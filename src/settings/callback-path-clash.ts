import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { replacePrivateFile } from '../util/private-file.js';
import type { CachedServerMetadata, Profile } from '../store/profile.js';
import type { ProfileStore } from '../store/store-types.js';
import { DEFAULT_CALLBACK_PATH } from './redirect-uri.js';

/** What a clash check needs of a profile: its server, its callback path, what its server promised. */
export type ClashProfile = Pick<Profile, 'baseUrl' | 'redirectUri' | 'callbackPath' | 'serverMetadata'>;

/** The path a profile's login listens on: its fixed redirect URI's, its callback path, else /callback. */
export function callbackPathOf(profile: ClashProfile): string {
  if (profile.redirectUri !== undefined && URL.canParse(profile.redirectUri))
    return new URL(profile.redirectUri).pathname;
  return profile.callbackPath ?? DEFAULT_CALLBACK_PATH;
}

/** Whether the server's metadata copy promises `iss` in every authorization response (RFC 9207). */
const promisesIss = (metadata: CachedServerMetadata | undefined) => metadata?.metadata?.isIssRequired === true;

/**
 * The other profiles a login at `baseUrl` listening on `callbackPath` could be mixed up with (RFC 9700
 * §4.4.2): on another origin, on the same callback path, while either server sends no `iss` (its
 * metadata does not promise it). A hostile server can then forward the browser to the other one's
 * authorization endpoint and take the code it answers with. Sorted by name.
 */
export function callbackPathClashes(
  profiles: ReadonlyArray<{ name: string; profile: ClashProfile }>,
  self: { name: string; baseUrl: string; callbackPath: string; serverMetadata: CachedServerMetadata | undefined },
): string[] {
  const origin = URL.canParse(self.baseUrl) ? new URL(self.baseUrl).origin : self.baseUrl;
  return profiles
    .filter(({ name, profile }) => {
      if (name === self.name || profile.baseUrl === undefined || !URL.canParse(profile.baseUrl)) return false;
      if (new URL(profile.baseUrl).origin === origin) return false;
      if (callbackPathOf(profile) !== self.callbackPath) return false;
      return !promisesIss(profile.serverMetadata) || !promisesIss(self.serverMetadata);
    })
    .map(({ name }) => name)
    .sort();
}

/** The warning for `clashes` (callbackPathClashes), naming the way out; undefined when there are none. */
export function callbackPathClashWarning(
  clashes: string[],
  callbackPath: string,
  profileName: string,
): string | undefined {
  if (clashes.length === 0) return undefined;
  const others = clashes.map((name) => `"${name}"`).join(', ');
  return (
    `profile ${others} on another server also listens on ${callbackPath}, and one of the two servers does not send iss: ` +
    `a server you do not trust could pass off the other's authorization code as its own (mix-up). Register a path of ` +
    `its own for this profile with the server and log in with --callback-path ${callbackPath.replace(/\/+$/, '')}/${profileName}`
  );
}

/** Where the pairs of profiles already warned of are kept: beside the config file, one `a\tb` pair a line. */
const WARNED_FILE = 'callback-path-warned';

/** The pairs of profiles already warned of (sorted names joined by a tab), from beside `configPath`. */
function warnedPairs(configPath: string): Set<string> {
  try {
    return new Set(
      readFileSync(join(dirname(configPath), WARNED_FILE), 'utf8')
        .split('\n')
        .filter(Boolean),
    );
  } catch {
    return new Set();
  }
}

/**
 * Warns, before the browser opens, when another profile on another server listens on the same
 * callback path while either server sends no `iss` (callbackPathClashes: RFC 9700 §4.4.2's mix-up),
 * once per pair of profiles (recorded beside the config file; `mmauth doctor` says it every time).
 * A config file that cannot be listed warns of nothing: the login itself says what is wrong with it.
 */
export function warnOfCallbackPathClash(
  store: ProfileStore,
  self: { name: string; baseUrl: string; callbackPath: string; serverMetadata: CachedServerMetadata | undefined },
  out: { warn(line: string): void },
): void {
  let profiles: ReturnType<ProfileStore['list']>;
  try {
    profiles = store.list();
  } catch {
    return;
  }
  const pairOf = (other: string) => [self.name, other].sort().join('\t');
  const warned = warnedPairs(store.path);
  const fresh = callbackPathClashes(profiles, self).filter((other) => !warned.has(pairOf(other)));
  const warning = callbackPathClashWarning(fresh, self.callbackPath, self.name);
  if (warning === undefined) return;
  out.warn(warning);
  try {
    const lines = [...warned, ...fresh.map(pairOf)].sort();
    replacePrivateFile(join(dirname(store.path), WARNED_FILE), `${lines.join('\n')}\n`);
  } catch {
    // Not recorded (a directory not writable): the warning comes again next time, no harm.
  }
}
