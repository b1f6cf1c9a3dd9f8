import { environmentClientSecret, type AppContext } from '../context.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import { endpointsFor } from '../oauth/server-metadata.js';
import type { TokenResponse } from '../oauth/parse.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';
import { LOCK_HOLD_MAX_MS } from '../store/config-lock.js';
import { markRenewalSent, RENEWAL_BUDGET_MS } from './renewals-in-flight.js';
import type { ListedProfile } from '../store/profile-listing.js';
import type { Profile, StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { hasFollowers } from '../store/token-followers.js';
import { judgeStoredToken } from '../store/token-state.js';
import { settleChain } from './chain.js';

export { settleChain } from './chain.js';
import { isSecretForClient } from './credential-binding.js';
import { keptReplacedTokens } from './replaced-tokens.js';
import { toStoredToken } from './token-record.js';

export { isFresh } from './freshness.js';

/** How a profile's token renews: with its refresh token, by a new client credentials grant, or not at all. */
export type RenewalKind = 'refresh_token' | 'client_credentials' | 'none';

/**
 * The client secret renewal may use: the environment's (environmentClientSecret), else the stored one when it belongs to
 * the profile's client (never a flag or a prompt; the project's rules).
 */
function renewalSecret(profile: Profile, env: NodeJS.ProcessEnv): string | undefined {
  return environmentClientSecret(env) ?? (isSecretForClient(profile) ? profile.clientSecret : undefined);
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
  const hasSecret = hasStoredSecret || environmentClientSecret(env) !== undefined;
  if (hasRefreshToken && profile.clientId !== undefined) return 'refresh_token';
  if (profile.token?.grant === 'client_credentials' && profile.clientId !== undefined && hasSecret) {
    return 'client_credentials';
  }
  return 'none';
}

/** What a renewal needs besides the profile: where it lives, the bound on each request, the trace. */
export interface RenewalTarget {
  profileName: string;
  store: ProfileStore;
  /** Seconds each request may take; capped so that no lock is held longer than waiters wait. */
  timeoutSeconds: number;
  /** Gets each exchange, redacted (--verbose). */
  trace?: ((line: string) => void) | undefined;
  /** The server has already refused the access token (401 invalid_token): a refused refresh ends the grant. */
  isAccessTokenRefused?: boolean;
  /**
   * Gets the new token as soon as it is stored, before it is presented: on a rotating server the
   * presentation ends the previous access token (as servers of the family do), so whoever
   * hands tokens out (exec's file and endpoint) switches first.
   */
  onStored?: ((token: StoredToken) => void) | undefined;
}

/**
 * Ms between storing a renewed token and first presenting it while a process follows the profile
 * (`exec`, markFollower): its file and endpoint switch in that time (inotify, else a FOLLOW_POLL_MS
 * stat), and a child that read the previous token just before has used it. Without
 * a follower, nothing waits.
 */
export const HAND_OVER_MS = 150;

/** The transport of a renewal: the profile's endpoints, requests bounded below the lock's hold. */
function renewalServer(profile: Profile, baseUrl: string, target: RenewalTarget, ctx: AppContext): ServerConfiguration {
  // A renewal request, once sent, has a budget of its own, and no Ctrl-C, signal or caller's
  // --timeout cuts it off: what the server mints is stored (the process waits for it: renewals-in-flight.ts).
  const timeoutMs = Math.min(Math.max(target.timeoutSeconds * 1000, RENEWAL_BUDGET_MS), LOCK_HOLD_MAX_MS);
  // The token endpoint the server's metadata names (RFC 8414), as the profile last read it.
  return {
    endpoints: endpointsFor(baseUrl, profile.serverMetadata),
    fetch: ctx.http(timeoutMs, target.trace, { isUninterruptible: true }).fetch,
  };
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
    const { requestTokenRefresh } = await import('../oauth/refresh.js');
    return requestTokenRefresh(server, { clientId, clientSecret }, profile.token?.refreshToken ?? '');
  }
  const { requestClientCredentialsToken } = await import('../oauth/client-credentials.js');
  return requestClientCredentialsToken(
    server,
    clientId,
    clientSecret ?? '',
    profile.token?.scope ?? profile.scope ?? 'service',
  );
}

/**
 * Whether the access token of a grant whose refresh token was just refused is dead too: the caller
 * saw it refused, it has expired, or token info refuses it now (one request; a failure keeps it).
 */
async function isAccessTokenDead(
  token: StoredToken,
  server: ServerConfiguration,
  target: RenewalTarget,
  ctx: AppContext,
) {
  if (target.isAccessTokenRefused === true || judgeStoredToken(token, ctx.nowMs()) === 'expired') return true;
  const { lookUpTokenInfo } = await import('../oauth/token-info.js');
  return lookUpTokenInfo(server, token.accessToken).then(
    (result) => !result.isActive,
    () => false,
  );
}

/**
 * Renews the profile's token once across processes (single flight): under the store's lock it
 * re-reads the profile; if the access token differs from `seen`, another process renewed it and
 * that token is returned without a request. Otherwise it asks the server (RFC 6749 §6 or §4.4),
 * writes the new pair with its access token added to the profile's chain to retire, hands it to
 * `target.onStored`, then presents that token once (retireChain), so the refresh token it replaced is no longer honoured before this
 * returns (as servers of the family do); a presentation a kill or the
 * network cut short stays recorded for the next renewal, revoke or logout. A refresh token the
 * server refuses (invalid_grant) is dropped, with the access token too when that is dead
 * (isAccessTokenDead: "dead is dead"), and `refresh_refused` thrown; a network failure or 5xx
 * leaves the store untouched and is thrown. Throws `token_expired` when nothing can renew it. The
 * request, once sent, is cut off by no Ctrl-C, signal or caller's bound (its budget: 60 s, or
 * --timeout when longer), and the process waits for it before it exits (renewalsSettled).
 */
export async function renewToken(seen: StoredToken, target: RenewalTarget, ctx: AppContext): Promise<StoredToken> {
  // Tracked from the moment its request goes out (the wait for the lock before it is interruptible).
  const sent: { settle: () => void } = { settle: () => undefined };
  try {
    return await renewOnce(seen, target, ctx, sent);
  } finally {
    sent.settle();
  }
}

async function renewOnce(
  seen: StoredToken,
  target: RenewalTarget,
  ctx: AppContext,
  sent: { settle: () => void },
): Promise<StoredToken> {
  let renewed: StoredToken | undefined;
  let refused: MmauthError | undefined;
  let server: ServerConfiguration | undefined;
  let chain: string[] = [];
  await target.store.update(target.profileName, async (current) => {
    const token = current.token;
    if (token !== undefined && token.accessToken !== seen.accessToken) {
      renewed = token;
      return current;
    }
    const kind = renewalOf(current, ctx.env);
    if (token === undefined || current.baseUrl === undefined || kind === 'none') {
      refused = cannotRenew(target.profileName);
      return current;
    }
    server = renewalServer(current, current.baseUrl, target, ctx);
    sent.settle = markRenewalSent();
    let response: TokenResponse;
    try {
      response = await requestRenewal(kind, current, server, ctx);
    } catch (error) {
      if (
        kind === 'refresh_token' &&
        hasErrorCode(error, 'token_endpoint_error') &&
        error.oauthError === 'invalid_grant'
      ) {
        refused = refreshRefused(target.profileName, error);
        const isDead = await isAccessTokenDead(token, server, target, ctx);
        return {
          ...current,
          lastGrant: token.grant,
          token: isDead ? undefined : { ...token, refreshToken: undefined },
        };
      }
      throw error;
    }
    const issued = toStoredToken(response, token.grant, ctx.nowMs(), token.scope ?? current.scope ?? 'service');
    // A device sign-in stays one across its renewals (status says how the grant began).
    const minted = token.viaDevice === true ? { ...issued, viaDevice: true } : issued;
    // The same access token back (reuse_access_token), or a server known to do so: a shared token.
    // Handed back, it keeps the expiry it was issued with (its stated rest is rounded).
    const isSame = minted.accessToken === token.accessToken;
    const next =
      isSame || token.isShared === true
        ? { ...minted, isShared: true, ...(isSame ? { obtainedAt: token.obtainedAt, expiresAt: token.expiresAt } : {}) }
        : minted;
    // RFC 6749 §6: a server that issues no new refresh token leaves the old one valid.
    renewed =
      next.refreshToken === undefined && kind === 'refresh_token'
        ? { ...next, refreshToken: token.refreshToken }
        : next;
    const isRotated = kind === 'refresh_token' && next.refreshToken !== undefined;
    chain = [...(current.chainToRetire ?? []), ...(isRotated ? [next.accessToken] : [])];
    // A client-credentials renewal leaves the old token live (programs may hold it): remembered for logout.
    const replacedTokens =
      kind === 'client_credentials'
        ? keptReplacedTokens(
            current,
            { baseUrl: current.baseUrl, clientId: current.clientId, token: renewed },
            ctx.nowMs(),
          )
        : current.replacedTokens;
    return { ...current, token: renewed, chainToRetire: chain.length === 0 ? undefined : chain, replacedTokens };
  });
  if (refused !== undefined) throw refused;
  if (renewed === undefined) throw cannotRenew(target.profileName);
  target.onStored?.(renewed);
  if (server !== undefined && chain.length > 0) {
    if (hasFollowers(target.store.path, target.profileName)) await new Promise((r) => setTimeout(r, HAND_OVER_MS));
    await settleChain(server, chain, target);
  }
  return renewed;
}

/** `token_expired` (exit 4) for a token nothing can renew; the failure map names the next step. */
export function cannotRenew(profileName: string): MmauthError {
  return new MmauthError('token_expired', `the token of profile "${profileName}" cannot be renewed here`);
}

function refreshRefused(profileName: string, cause: MmauthError): MmauthError {
  return new MmauthError(
    'refresh_refused',
    `the server no longer honours the refresh token of profile "${profileName}" (invalid_grant)`,
    { cause, oauthError: 'invalid_grant' },
  );
}
