import type { AppContext } from '../context.js';
import { givenToken } from '../settings/given-token.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import type { Profile, StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { judgeStoredToken, secondsLeft } from '../store/token-state.js';
import { selectAccessToken, type AccessTokenChoice } from './access-token.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import type { TokenOptions } from '../settings/setting-options.js';
import { isFresh, renewalOf, renewToken } from '../grant/renewal.js';
import { agentSocketOf, pickSetting, traceFor } from '../settings/settings.js';
import { selectProfile } from '../settings/profile-selection.js';
import { openLocalTarget, requireProfile } from '../settings/target.js';
import { untilAborted } from '../util/when-aborted.js';
import {
  beforeDeadline,
  deadlineAt,
  deadlineExceeded,
  isRecentlyVerified,
  meetsMinTtl,
  msLeft,
  TIMED_OUT,
  verifyStoredToken,
  type Verification,
} from './helper-contract.js';

/** What beforeDeadline gives when a detached renewal process finished (the store holds its result). */
const RENEWED_ELSEWHERE: unique symbol = Symbol('renewed elsewhere');

/** Options of the commands that hand out a token (token, header): --min-ttl, --no-renew, --timeout. */
export interface UsableTokenOptions extends TokenOptions {
  /** false with --no-renew: never touch the network. */
  renew: boolean;
  /** Seconds, for a renewal's request. */
  timeout: number;
  /** --deadline: seconds the whole command may take (helper-contract.ts). */
  deadline?: number | undefined;
  /** --verify: ask token info about a token the local checks pass (runs within 2 s share one answer). */
  verify?: boolean | undefined;
}

/** Failures after which the current, still unexpired token may still be handed out. */
function isPassingFailure(error: unknown): boolean {
  return (
    hasErrorCode(error, 'connection_failed') ||
    hasErrorCode(error, 'request_timeout') ||
    hasErrorCode(error, 'tls_failure') ||
    (hasErrorCode(error, 'unexpected_status') && (error.status ?? 0) >= 500) ||
    (hasErrorCode(error, 'token_endpoint_error') && (error.status ?? 0) >= 500)
  );
}

/**
 * A fresh token of a keyring profile, read from its copy in the keyring without opening the sealed
 * credentials (no cipher loaded: about 5 ms of every `mmauth token`); undefined when the profile
 * is not such a profile, its token is not fresh (isFresh with --min-ttl), or there is no copy.
 * Throws `base_url_mismatch` and keyring errors.
 */
async function freshSealedToken(
  options: UsableTokenOptions,
  ctx: AppContext,
  baseUrl: string | undefined,
): Promise<(AccessTokenChoice & { profileName: string }) | undefined> {
  const store = await ctx.openStore();
  const profileName = (await selectProfile(options.profile, ctx, store)).name;
  const listed = store.listOne(profileName);
  const token = listed?.token;
  if (listed?.credentialsIn !== 'keyring' || token === undefined) return undefined;
  if (!isFresh(token, ctx.nowMs(), options.minTtl)) return undefined;
  assertCredentialOrigin(profileName, listed, baseUrl);
  const accessToken = await store.readAccessToken(profileName, listed);
  if (accessToken === undefined) return undefined;
  const { plainAccessToken: _plain, accessTokenRef: _ref, hasRefreshToken: _refresh, ...fields } = token;
  return { accessToken, stored: { ...fields, accessToken }, profileName };
}

/**
 * What --verify learns of a token the local checks passed (verifyStoredToken: one token info
 * request, bounded by --timeout and --deadline). When the server cannot say in time (the network,
 * a 5xx, the deadline) the token counts as `active`, with one warning: it is handed out as it would
 * be after a failed renewal. Throws what verifyStoredToken throws otherwise.
 */
async function verification(
  profileName: string,
  profile: Profile & { token: StoredToken; baseUrl: string },
  store: ProfileStore,
  options: UsableTokenOptions,
  deadlineAtMs: number | undefined,
  ctx: AppContext,
  onWarning: (line: string) => void,
): Promise<Verification> {
  const timeoutMs = Math.min(options.timeout * 1000, msLeft(deadlineAtMs));
  try {
    const verdict = await beforeDeadline(verifyStoredToken(profileName, profile, store, timeoutMs, ctx), deadlineAtMs);
    if (verdict !== TIMED_OUT) return verdict;
    onWarning(
      `the server did not say within --deadline ${options.deadline} s whether the token lives; handing out the current one`,
    );
  } catch (error) {
    if (!isPassingFailure(error)) throw error;
    onWarning(
      `could not ask the server about the token (${error instanceof Error ? error.message : String(error)}); handing out the current one`,
    );
  }
  return 'active';
}

/** Ctrl-C (or a signal) while a renewal is under way: the caller stops waiting, the renewal goes on. */
const interrupted = () => new MmauthError('interrupted', 'interrupted');

/**
 * The token `token` and `header` hand out: the agent's when MMAUTH_AGENT_SOCK names one
 * (agentAccessToken, with the profile's base URL); MMAUTH_TOKEN as given; else the profile's token, renewed
 * first when it is stale (isFresh) and can be (renewToken, one request across processes), unless
 * `renew` is false. A fresh token costs no request and loads no network module. When a renewal
 * fails on the network or the server while the token has not expired, the token is handed out
 * with `onWarning`. `onStored` gets a renewed token before it is first presented (RenewalTarget).
 * Throws what selectAccessToken and renewToken throw, and
 * `token_lifetime_too_short` when the server's own lifetime cannot meet --min-ttl.
 */
export async function usableAccessToken(
  options: UsableTokenOptions,
  ctx: AppContext,
  onWarning: (line: string) => void,
  onStored?: (token: StoredToken) => void,
): Promise<AccessTokenChoice & { profileName: string; baseUrl?: string | undefined }> {
  // An agent named: it is the only source of tokens; no local file or keyring is read.
  const agentSocket = agentSocketOf(ctx.env);
  // Loaded only then: the agent's client (node:net) is no part of the local path.
  if (agentSocket !== undefined) return (await import('./agent-token.js')).agentAccessToken(agentSocket, options, ctx);
  const baseUrl = pickSetting(undefined, ctx.env.MMAUTH_BASE_URL, undefined);
  const deadlineAtMs = deadlineAt(options.deadline);
  if (givenToken(ctx.env) === undefined && options.verify !== true) {
    const fresh = await freshSealedToken(options, ctx, baseUrl);
    if (fresh !== undefined) return fresh;
  }
  const local = await openLocalTarget(options, ctx);
  const { profileName, profile } = local;
  const handOut = () => ({ ...selectAccessToken(ctx, profileName, profile, baseUrl, options.minTtl), profileName });
  if (givenToken(ctx.env) !== undefined) return handOut();
  requireProfile(local);
  const token = profile?.token;
  if (token === undefined || profile === undefined) return handOut();
  assertCredentialOrigin(profileName, profile, baseUrl);
  const canRenew = options.renew && renewalOf(profile, ctx.env) !== 'none';
  let isRefused = false;
  if (isFresh(token, ctx.nowMs(), options.minTtl) || !canRenew) {
    const verdict =
      options.verify === true && profile.baseUrl !== undefined && !isRecentlyVerified(token, ctx.nowMs())
        ? await verification(
            profileName,
            { ...profile, token, baseUrl: profile.baseUrl },
            local.store,
            options,
            deadlineAtMs,
            ctx,
            onWarning,
          )
        : 'active';
    if (verdict === 'active' || !canRenew) return handOut();
    isRefused = true;
  }
  let renewed: StoredToken;
  try {
    const trace = await traceFor(options, ctx);
    // A second past the deadline: the deadline decides first (beforeDeadline), never the request's own bound.
    const timeoutSeconds = Math.min(options.timeout, Math.ceil(msLeft(deadlineAtMs) / 1000) + 1);
    const target = {
      profileName,
      store: local.store,
      timeoutSeconds,
      trace,
      onStored,
      isAccessTokenRefused: isRefused,
    };
    // With a deadline, the renewal runs in a process of its own that outlives this one: when the
    // deadline comes first, what the server mints is still stored (detached-renewal.ts).
    const detached =
      deadlineAtMs !== undefined && ctx.selfCommand !== undefined
        ? await (
            await import('./detached-renewal.js')
          ).startDetachedRenewal(
            ctx.selfCommand,
            {
              profileName,
              minTtl: options.minTtl,
              timeout: options.timeout,
              verify: isRefused,
              verbose: trace !== undefined,
            },
            ctx,
          )
        : undefined;
    const work: Promise<StoredToken | typeof RENEWED_ELSEWHERE> =
      detached === undefined ? renewToken(token, target, ctx) : detached.done.then(() => RENEWED_ELSEWHERE);
    // Ctrl-C (or a signal) ends the wait, never the renewal: it is stored before the process exits.
    const outcome = await beforeDeadline(untilAborted(work, ctx.signal, interrupted), deadlineAtMs);
    if (outcome === TIMED_OUT) detached?.release();
    if (outcome === RENEWED_ELSEWHERE) {
      // That process stored the renewed token, or said on stderr why it handed out the current one.
      const after = (await local.store.read(profileName))?.token;
      if (after === undefined || after.accessToken === token.accessToken) return handOut();
      onStored?.(after);
      renewed = after;
    } else if (outcome === TIMED_OUT) {
      if (isRefused || !meetsMinTtl(token, ctx.nowMs(), options.minTtl)) {
        throw deadlineExceeded(
          options.deadline ?? 0,
          'the renewal did not finish in time and the current token is not good enough',
        );
      }
      onWarning(`the renewal did not finish within --deadline ${options.deadline} s; handing out the current token`);
      return handOut();
    } else {
      renewed = outcome;
    }
  } catch (error) {
    if (isRefused || !isPassingFailure(error) || judgeStoredToken(token, ctx.nowMs()) === 'expired') throw error;
    onWarning(
      `could not renew the token (${error instanceof Error ? error.message : String(error)}); handing out the current one`,
    );
    return handOut();
  }
  const leftS = secondsLeft(renewed, ctx.nowMs());
  if (leftS !== undefined && judgeStoredToken(renewed, ctx.nowMs()) === 'expired') {
    // A token issued already expired (expires_in 0) is judged dead here: never handed out.
    const message = `the server issued a token that is already expired (a lifetime of ${Math.max(0, leftS)} s): not handing it out`;
    throw new MmauthError('token_lifetime_too_short', message);
  }
  if (leftS !== undefined && leftS < options.minTtl) {
    const message = `the server issues tokens for ${leftS} s, less than --min-ttl ${options.minTtl}`;
    throw new MmauthError('token_lifetime_too_short', message, { hint: 'lower --min-ttl' });
  }
  return { accessToken: renewed.accessToken, stored: renewed, profileName };
}
