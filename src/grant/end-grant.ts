import type { AppContext } from '../context.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import { requestRevocation } from '../oauth/revocation.js';
import type { ClientAuthentication, ServerConfiguration } from '../oauth/server-configuration.js';
import { lookUpTokenInfo } from '../oauth/token-info.js';
import type { StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { judgeStoredToken } from '../store/token-state.js';
import { retireChain } from './chain.js';
import { renewToken, settleChain } from './renewal.js';
import { toStoredToken } from './token-record.js';

/**
 * What a revocation proved: `confirmed`, token info accepted the token before and refuses it after;
 * `unconfirmed`, the server has no token info endpoint (404; RFC 7009's reading of the 200);
 * `already_inactive`, token info refused it before (expired or revoked): nothing live was revoked.
 */
export type RevocationResult = 'confirmed' | 'unconfirmed' | 'already_inactive';

/**
 * Revokes `accessToken` (RFC 7009 §2; spec §4.4) between two token info look-ups (spec §4.3). A
 * public client (no secret) sends `client_id` alone. Throws `revocation_error` when the server
 * refuses, `revocation_not_confirmed` when token info still accepts the token after, and
 * `client_secret_required` for either without a secret.
 */
export async function revokeAndConfirm(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<RevocationResult> {
  try {
    return await revokeThenLook(server, client, accessToken);
  } catch (error) {
    throw client.clientSecret === undefined && isRefusal(error) ? secretRequired(error) : error;
  }
}

/** A refusal that, for a client that sent no secret, means the token's client is confidential. */
function isRefusal(error: unknown): boolean {
  if (hasErrorCode(error, 'revocation_not_confirmed')) return true;
  return (
    hasErrorCode(error, 'revocation_error') &&
    ['unauthorized_client', 'invalid_client'].includes(error.oauthError ?? '')
  );
}

function secretRequired(cause: unknown): MmauthError {
  return new MmauthError(
    'client_secret_required',
    'the token was NOT revoked: its client is confidential, and revoking it needs the client secret',
    {
      cause,
    },
  );
}

/** Whether token info accepts the token; undefined when the server has no token info endpoint (404). */
async function isActiveOrUnknown(server: ServerConfiguration, accessToken: string): Promise<boolean | undefined> {
  try {
    return (await lookUpTokenInfo(server, accessToken)).isActive;
  } catch (error) {
    if (hasErrorCode(error, 'unexpected_status') && error.status === 404) return undefined;
    throw error;
  }
}

async function revokeThenLook(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<RevocationResult> {
  const wasActive = await isActiveOrUnknown(server, accessToken);
  await requestRevocation(server, client, accessToken);
  if (wasActive === false) return 'already_inactive';
  const isActive = await isActiveOrUnknown(server, accessToken);
  if (isActive === undefined) return 'unconfirmed';
  if (isActive) {
    const message =
      'the token was NOT revoked: the revoke endpoint answered 200 but token info still accepts the token';
    throw new MmauthError('revocation_not_confirmed', message);
  }
  return 'confirmed';
}

/** What ending a grant needs: the server, the client, the bound on each request and the trace. */
export interface GrantTarget {
  server: ServerConfiguration;
  client: ClientAuthentication;
  timeoutSeconds: number;
  trace?: ((line: string) => void) | undefined;
  /** Gets a pair a detached renewal (no `stored`) obtained, before its access token is presented. */
  onRenewed?: ((token: StoredToken) => void) | undefined;
}

/** Where a stored grant lives, so that a renewal on the way is stored like any other. */
export interface StoredGrant {
  profileName: string;
  store: ProfileStore;
  /** Access tokens whose presentation is still owed (Profile.chainToRetire). */
  chainToRetire: readonly string[] | undefined;
}

/**
 * How a grant ended: `confirmed`/`unconfirmed` as revokeAndConfirm says; `already_inactive`, the
 * server refused the access token before (expired or revoked: nothing live was revoked);
 * `already_ended`, the server refused the refresh token (invalid_grant): it had ended the grant.
 */
export type GrantEnd = RevocationResult | 'already_ended';

/** The outcome of endGrant: how it ended, the access token it revoked, and notes for people. */
export interface EndedGrant {
  result: GrantEnd;
  accessToken: string;
}

/** Presents the owed access tokens, failing on the first that cannot reach the server. */
async function retireOwed(server: ServerConfiguration, stored: StoredGrant | undefined): Promise<void> {
  const owed = stored?.chainToRetire ?? [];
  if (stored === undefined || owed.length === 0) return;
  // A link of the refresh chain that could not be presented may still be live: no "ended" without it.
  const { failure } = await settleChain(server, owed, stored);
  if (failure !== undefined) throw failure;
}

/** A refresh of a grant that is no profile's any more (a replaced one): the new pair, its access token presented. */
async function renewDetached(token: StoredToken, target: GrantTarget, ctx: AppContext): Promise<StoredToken> {
  const { requestTokenRefresh } = await import('../oauth/refresh.js');
  const response = await requestTokenRefresh(target.server, target.client, token.refreshToken ?? '');
  const next = toStoredToken(response, token.grant, ctx.nowMs(), token.scope ?? 'service');
  const kept = { ...next, refreshToken: next.refreshToken ?? token.refreshToken };
  target.onRenewed?.(kept);
  await retireChain(target.server, [next.accessToken]);
  return kept;
}

/**
 * Ends a grant (the project's rules: the one routine behind revoke, logout, a replaced grant and profile
 * removal). First the access tokens still owed a presentation are presented (the chain's links,
 * what servers of the family do). An expired access token with a refresh token is renewed
 * first (the server ignores the revocation of an expired token's record, Refresh tokens 5): stored
 * through renewToken when `stored` is given, else detached; a refresh the server refuses means it
 * had already ended the grant (`already_ended`). Then the access token is revoked and confirmed
 * (revokeAndConfirm) and the refresh token revoked too, with `token_type_hint` (RFC 7009 §2.1).
 * `onNote` says what was done beyond that. Throws what revokeAndConfirm and the renewal throw.
 */
export async function endGrant(
  token: StoredToken,
  target: GrantTarget,
  ctx: AppContext,
  onNote: (line: string) => void,
  stored?: StoredGrant,
): Promise<EndedGrant> {
  await retireOwed(target.server, stored);
  const renew = (current: StoredToken) =>
    stored === undefined
      ? renewDetached(current, target, ctx)
      : renewToken(current, { ...stored, timeoutSeconds: target.timeoutSeconds, trace: target.trace }, ctx);
  let current = token;
  let isRenewed = false;
  const renewFirst = async (why: string): Promise<boolean> => {
    try {
      current = await renew(current);
    } catch (error) {
      if (hasErrorCode(error, 'refresh_refused') || isRefusedGrant(error)) return false;
      throw error;
    }
    isRenewed = true;
    onNote(`${why}: renewed it first, so that revoking it ends the grant and its refresh token`);
    return true;
  };
  if (current.refreshToken !== undefined && judgeStoredToken(current, ctx.nowMs()) === 'expired') {
    if (!(await renewFirst('the access token had expired')))
      return { result: 'already_ended', accessToken: current.accessToken };
  }
  let result = await revokeAndConfirm(target.server, target.client, current.accessToken);
  if (result === 'already_inactive' && current.refreshToken !== undefined && !isRenewed) {
    // The server refused an access token this clock still trusts; its refresh token may live on (Refresh tokens 5).
    if (!(await renewFirst('the server no longer accepted the access token'))) {
      return { result: 'already_ended', accessToken: current.accessToken };
    }
    result = await revokeAndConfirm(target.server, target.client, current.accessToken);
  }
  if (current.refreshToken !== undefined) {
    // The server ended the pair with its access token; asking again for the refresh token costs one request.
    await requestRevocation(target.server, target.client, current.refreshToken, 'refresh_token').catch(
      (error: unknown) => {
        onNote(`the refresh token's own revocation failed: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }
  return { result, accessToken: current.accessToken };
}

function isRefusedGrant(error: unknown): boolean {
  return hasErrorCode(error, 'token_endpoint_error') && error.oauthError === 'invalid_grant';
}
