import { MmauthError } from '../errors.js';
import type { TokenOrigin } from '../oauth/wire.js';
import type { Profile } from '../store/profile.js';

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether the profile's stored client secret belongs to `clientId` (default: the profile's own):
 * a secret is stored with the client id it authenticates, and never goes with another one.
 */
export function isSecretForClient(profile: Pick<Profile, 'clientId'>, clientId = profile.clientId): boolean {
  return profile.clientId !== undefined && profile.clientId === clientId;
}

/**
 * The profile as a run against `baseUrl` with `clientId` may use it: as stored when it is bound to
 * that origin (or to none), else without its token and client secret (a profile being rebound with
 * --replace); without its client secret when `clientId` is another client's.
 */
export function credentialsFor(profile: Profile | undefined, baseUrl: string, clientId?: string): Profile | undefined {
  if (profile?.baseUrl !== undefined && originOf(profile.baseUrl) !== originOf(baseUrl)) {
    return { ...profile, token: undefined, clientSecret: undefined };
  }
  if (profile?.clientSecret !== undefined && clientId !== undefined && !isSecretForClient(profile, clientId)) {
    return { ...profile, clientSecret: undefined };
  }
  return profile;
}

/** Whether the profile holds a credential: a token or a client secret. */
export function hasStoredCredentials(profile: Profile | undefined): boolean {
  return profile?.token !== undefined || profile?.clientSecret !== undefined;
}

/**
 * Stored credentials go only to the origin of the profile's base URL (RFC 6749 §10.3, §10.4):
 * throws `base_url_mismatch` (exit 2, before any connection) when `baseUrl`, the URL this run
 * would use, has another origin. Undefined `baseUrl` means the profile's own.
 */
export function assertCredentialOrigin(
  profileName: string,
  profile: Pick<Profile, 'baseUrl'> | undefined,
  baseUrl: string | undefined,
): void {
  const bound = profile?.baseUrl;
  if (bound === undefined || baseUrl === undefined || originOf(bound) === originOf(baseUrl)) return;
  throw new MmauthError(
    'base_url_mismatch',
    `profile "${profileName}" holds credentials for ${bound}; refusing to send them to ${baseUrl}`,
  );
}

/** Whether a token of this origin acts for a user (code flow, implicit, personal) rather than for the client. */
function isUserToken(origin: TokenOrigin): boolean {
  return origin !== 'client_credentials';
}

/**
 * Before `login` or `client-credentials` stores a new token of `origin` for `baseUrl` in the profile:
 * unless `isReplace`, throws `base_url_mismatch` when the profile's credentials belong to another
 * origin, and `identity_change` when a user token would be replaced by a client token or the
 * reverse (exit 2 either way, naming --profile and --replace).
 */
export function assertMayStore(
  profileName: string,
  profile: Profile | undefined,
  baseUrl: string,
  origin: TokenOrigin,
  isReplace: boolean,
): void {
  if (isReplace || !hasStoredCredentials(profile)) return;
  assertCredentialOrigin(profileName, profile, baseUrl);
  const current = profile?.token?.grant;
  if (current !== undefined && isUserToken(current) !== isUserToken(origin)) {
    const from = isUserToken(current) ? 'a user token' : 'a client token';
    const to = isUserToken(origin) ? 'a user token' : 'a client token';
    throw new MmauthError(
      'identity_change',
      `profile "${profileName}" holds ${from} (${current}); refusing to replace it with ${to}`,
    );
  }
}

/**
 * What `settings` would move a profile holding credentials to (its base URL's origin, or its client
 * id), worded as "FROM to TO"; undefined when it moves neither, or the profile holds none. The
 * credentials are bound to both: such a change must end the grant first.
 */
export function bindingMove(
  listed:
    | { baseUrl?: string | undefined; clientId?: string | undefined; token?: unknown; hasClientSecret: boolean }
    | undefined,
  settings: Pick<Partial<Profile>, 'baseUrl' | 'clientId'>,
): string | undefined {
  if (listed === undefined || (listed.token === undefined && !listed.hasClientSecret)) return undefined;
  const from = listed.baseUrl === undefined ? undefined : originOf(listed.baseUrl);
  if (settings.baseUrl !== undefined && originOf(settings.baseUrl) !== from) {
    return `${listed.baseUrl ?? ''} to ${settings.baseUrl}`;
  }
  if (settings.clientId !== undefined && settings.clientId !== listed.clientId) {
    return `client ${listed.clientId ?? ''} to ${settings.clientId}`;
  }
  return undefined;
}
