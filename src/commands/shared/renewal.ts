import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import { resolveEndpoints } from '../../oauth/endpoints.js';
import type { TokenResponse } from '../../oauth/parse.js';
import type { ServerConfiguration } from '../../oauth/server-configuration.js';
import { LOCK_HOLD_MAX_MS } from '../../store/config-lock.js';
import type { ListedProfile } from '../../store/profile-listing.js';
import type { Profile, StoredToken } from '../../store/profile.js';
import type { ProfileStore } from '../../store/profile-store.js';
import { judgeStoredToken, secondsLeft } from '../../store/token-state.js';
import { nextStep } from './next-step.js';
import { pickSetting } from './settings.js';
import { toStoredToken } from './token-record.js';

/** How a profile's token renews: with its refresh token, by a new client credentials grant, or not at all. */
export type RenewalKind = 'refresh_token' | 'client_credentials' | 'none';

/** The renewal margin's ceiling, in seconds: a token with less left than this (or half its lifetime) is stale. */
const MARGIN_S = 60;

/** The lifetime the server issued a token with, in seconds; undefined for no expiry. */
function issuedLifetimeS(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  return Math.max(0, Math.round((Date.parse(token.expiresAt) - Date.parse(token.obtainedAt)) / 1000));
}

/**
 * Whether a token is fresh at `nowMs` (epoch ms): at least max(`minTtlS`, min(60 s, half its
 * issued lifetime)) left, so that a server issuing short tokens does not make every call renew. A
 * token with no expiry always is.
 */
export function isFresh(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>, nowMs: number, minTtlS: number): boolean {
  const leftS = secondsLeft(token, nowMs);
  const lifetimeS = issuedLifetimeS(token);
  if (leftS === undefined || lifetimeS === undefined) return true;
  if (judgeStoredToken(token, nowMs) === 'expired') return false;
  return leftS >= Math.max(minTtlS, Math.min(MARGIN_S, lifetimeS / 2));
}

/** The client secret renewal may use: MMAUTH_CLIENT_SECRET, else the stored one (never a flag or a prompt). */
function renewalSecret(profile: Profile, env: NodeJS.ProcessEnv): string | undefined {
  return pickSetting(undefined, env.MMAUTH_CLIENT_SECRET, profile.clientSecret);
}

/**
 * How the profile's token renews: its refresh token; a client credentials token with a secret at
 * hand; else none. A listed profile (status) is judged by what it holds, not the values.
 */
export function renewalOf(profile: Profile | ListedProfile, env: NodeJS.ProcessEnv): RenewalKind {
  const isListed = 'hasClientSecret' in profile;
  const hasRefreshToken = isListed
    ? profile.token?.hasRefreshToken === true
    : profile.token?.refreshToken !== undefined;
  const hasStoredSecret = isListed ? profile.hasClientSecret : profile.clientSecret !== undefined;
  const hasSecret = hasStoredSecret || pickSetting(undefined, env.MMAUTH_CLIENT_SECRET, undefined) !== undefined;
  if (hasRefreshToken && profile.clientId !== undefined) return 'refresh_token';
  if (profile.token?.grant === 'client_credentials' && profile.clientId !== undefined && hasSecret) {
    return 'client_credentials';
  }
  return 'none';
}

/** What a renewal needs besides the profile: where it lives, and the transport. */
export interface RenewalTarget {
  profileName: string;
  store: ProfileStore;
  /** Seconds each request may take; capped so that no lock is held longer than waiters wait. */
  timeoutSeconds: number;
}

/** The answer to the renewal request: a refresh, or a new client credentials grant. */
async function requestRenewal(
  kind: RenewalKind,
  profile: Profile,
  server: ServerConfiguration,
  ctx: AppContext,
): Promise<TokenResponse> {
  const clientId = profile.clientId ?? '';
  const clientSecret = renewalSecret(profile, ctx.env);
  if (kind === 'refresh_token') {
    const { requestTokenRefresh } = await import('../../oauth/refresh.js');
    return requestTokenRefresh(server, { clientId, clientSecret }, profile.token?.refreshToken ?? '');
  }
  const { requestClientCredentialsToken } = await import('../../oauth/client-credentials.js');
  return requestClientCredentialsToken(
    server,
    clientId,
    clientSecret ?? '',
    profile.token?.scope ?? profile.scope ?? 'service',
  );
}

/**
 * Renews the profile's token once across processes (single flight): under the store's lock it
 * re-reads the profile; if the access token differs from `seen`, another process renewed it and
 * that token is returned without a request. Otherwise it asks the server (RFC 6749 §6 or §4.4)
 * and writes the new pair before returning it (with rotation, the first use of the new access
 * token retires the old refresh token, so it must be stored first). A refresh token the server
 * refuses (invalid_grant) is dropped, the access token kept, and `refresh_refused` thrown (exit 4,
 * the next step named); a network failure or 5xx leaves the store untouched and is thrown.
 */
export async function renewToken(seen: StoredToken, target: RenewalTarget, ctx: AppContext): Promise<StoredToken> {
  let renewed: StoredToken | undefined;
  let refused: MmauthError | undefined;
  await target.store.update(target.profileName, async (current) => {
    const token = current.token;
    if (token !== undefined && token.accessToken !== seen.accessToken) {
      renewed = token;
      return current;
    }
    const kind = renewalOf(current, ctx.env);
    if (token === undefined || current.baseUrl === undefined || kind === 'none') {
      refused = cannotRenew(target.profileName, current);
      return current;
    }
    const endpoints = resolveEndpoints(current.baseUrl);
    const timeoutMs = Math.min(target.timeoutSeconds * 1000, LOCK_HOLD_MAX_MS);
    const server = { endpoints, fetch: ctx.http(timeoutMs).fetch };
    let response: TokenResponse;
    try {
      response = await requestRenewal(kind, current, server, ctx);
    } catch (error) {
      if (
        kind === 'refresh_token' &&
        hasErrorCode(error, 'token_endpoint_error') &&
        error.oauthError === 'invalid_grant'
      ) {
        refused = refreshRefused(target.profileName, current, error);
        return { ...current, token: { ...token, refreshToken: undefined } };
      }
      throw error;
    }
    const next = toStoredToken(response, token.grant, ctx.nowMs(), token.scope ?? current.scope ?? 'service');
    // RFC 6749 §6: a server that issues no new refresh token leaves the old one valid.
    renewed =
      next.refreshToken === undefined && kind === 'refresh_token'
        ? { ...next, refreshToken: token.refreshToken }
        : next;
    return { ...current, token: renewed };
  });
  if (refused !== undefined) throw refused;
  if (renewed === undefined) throw cannotRenew(target.profileName, undefined);
  return renewed;
}

/** `token_expired` (exit 4) for a token nothing can renew, with the one next step that works. */
export function cannotRenew(profileName: string, profile: Profile | undefined): MmauthError {
  return new MmauthError('token_expired', `the token of profile "${profileName}" cannot be renewed here`, {
    hint: `get a new one: ${nextStep(profile?.lastGrant, profileName)}`,
  });
}

function refreshRefused(profileName: string, profile: Profile, cause: MmauthError): MmauthError {
  return new MmauthError(
    'refresh_refused',
    `the server no longer honours the refresh token of profile "${profileName}" (invalid_grant)`,
    {
      cause,
      oauthError: 'invalid_grant',
      hint: `sign in again: ${nextStep(profile.lastGrant, profileName)}`,
    },
  );
}
