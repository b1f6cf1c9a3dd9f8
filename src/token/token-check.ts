import type { AppContext } from '../context.js';
import { hasErrorCode, isMmauthError } from '../errors.js';
import { endpointsFor } from '../oauth/server-metadata.js';
import { lookUpTokenInfo, type TokenInfoResult } from '../oauth/token-info.js';
import type { Profile } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { pickSetting } from '../settings/settings.js';

/**
 * Asks token info (spec §4.3) about `accessToken` at the server `profile` names: the endpoint its
 * metadata gives (RFC 8414), else the spec's path under its base URL. One GET, bounded by
 * `timeoutMs`. Returns lookUpTokenInfo's answer (active with the record, or not: 401); throws what
 * it throws (network, timeout, a malformed answer) and `invalid_base_url` or `insecure_base_url` for a
 * base URL mmauth refuses (resolveEndpoints).
 */
export function askTokenInfo(
  profile: Pick<Profile, 'serverMetadata'> & { baseUrl: string },
  accessToken: string,
  timeoutMs: number,
  ctx: AppContext,
): Promise<TokenInfoResult> {
  const endpoints = endpointsFor(profile.baseUrl, profile.serverMetadata);
  return lookUpTokenInfo({ endpoints, fetch: ctx.http(timeoutMs).fetch }, accessToken);
}

/** What token info said of a stored token: `active`, `refused` (401), `unreachable` (no answer), or null when not asked. */
export type TokenCheck = 'active' | 'refused' | 'unreachable' | null;

/** Failures that mean the server gave no answer: the profile is `unreachable`, the others are still checked. */
function isUnreachable(error: unknown): boolean {
  return (
    hasErrorCode(error, 'connection_failed') ||
    hasErrorCode(error, 'request_timeout') ||
    hasErrorCode(error, 'tls_failure')
  );
}

/**
 * What a failed check of a token through the agent says of it (`status --check`): `unreachable`
 * when the server gave no answer, null when the agent itself failed (nothing was checked), else
 * `refused` (token info refused it and it could not be renewed).
 */
export function checkAfterFailure(error: unknown): TokenCheck {
  if (!isMmauthError(error) || error.code.startsWith('agent_') || error.code === 'profile_not_served') return null;
  return isUnreachable(error) ? 'unreachable' : 'refused';
}

/**
 * Asks token info (spec §4.3) about each named profile's stored token (read from `store`, sealed
 * credentials opened), at that profile's own base URL (a MMAUTH_BASE_URL of another origin is
 * refused first: `base_url_mismatch`), each request bounded by `timeoutSeconds`. Profiles without
 * a token or base URL, and those whose credentials are lost (`credentials_lost`), get null; a
 * profile whose server gives no answer gets `unreachable`, its failure given to `onUnreachable`.
 * Throws malformed-answer errors and keyring errors (`keyring_unavailable`, `keyring_failed`).
 */
export async function checkStoredTokens(
  store: ProfileStore,
  names: readonly string[],
  timeoutSeconds: number,
  ctx: AppContext,
  onUnreachable: (name: string, error: unknown) => void = () => undefined,
): Promise<Map<string, TokenCheck>> {
  const checks = new Map<string, TokenCheck>();
  const fromEnv = pickSetting(undefined, ctx.env.MMAUTH_BASE_URL, undefined);
  for (const name of names) {
    // A profile whose credentials are lost cannot be checked; `mmauth token --profile NAME` says why.
    const profile = await store.read(name).catch((error: unknown) => {
      if (hasErrorCode(error, 'credentials_lost')) return undefined;
      throw error;
    });
    if (profile?.token === undefined || profile.baseUrl === undefined) {
      checks.set(name, null);
      continue;
    }
    assertCredentialOrigin(name, profile, fromEnv);
    try {
      const result = await askTokenInfo(
        { ...profile, baseUrl: profile.baseUrl },
        profile.token.accessToken,
        timeoutSeconds * 1000,
        ctx,
      );
      checks.set(name, result.isActive ? 'active' : 'refused');
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      checks.set(name, 'unreachable');
      onUnreachable(name, error);
    }
  }
  return checks;
}

/**
 * Whether token info (spec §4.3), at the endpoint profile `name`'s server names (its metadata, RFC
 * 8414, else the spec's path), still accepts `accessToken`: true when active, false when refused or
 * when the profile has no base URL. The request is bounded by `timeoutSeconds`. Throws what the
 * request throws (network, timeout, a malformed answer) and what reading the profile throws.
 */
export async function isAcceptedAtTokenInfo(
  store: ProfileStore,
  name: string,
  accessToken: string,
  timeoutSeconds: number,
  ctx: AppContext,
): Promise<boolean> {
  const profile = await store.read(name);
  if (profile?.baseUrl === undefined) return false;
  return (await askTokenInfo({ ...profile, baseUrl: profile.baseUrl }, accessToken, timeoutSeconds * 1000, ctx))
    .isActive;
}
