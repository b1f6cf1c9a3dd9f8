import type { AppContext } from '../context.js';
import { isFresh, staleAtMs } from '../grant/freshness.js';
import { renewToken } from '../grant/renewal.js';
import type { StoredToken } from '../store/profile.js';
import { judgeStoredToken, secondsLeft } from '../store/token-state.js';
import { usableAccessToken, type UsableTokenOptions } from './usable-token.js';
import type { ProfileFollower } from './profile-follower.js';
import type { ServedToken } from '../loopback/token-server.js';
import { refusalGuard } from './refusal-guard.js';
import { isAcceptedAtTokenInfo } from './token-check.js';

/** The longest wait between two tries of a failing renewal, in ms. */
const MAX_BACKOFF_MS = 60_000;
/** The shortest wait before a renewal timer fires again, in ms: never a busy loop (attacks N10). */
const MIN_DELAY_MS = 250;
/** The shortest time between two repeated warnings of the same kind, in ms (attacks N6). */
const WARNING_INTERVAL_MS = 30_000;

/** Keeps an `exec` child's token valid: renews before it goes stale, follows the store, hands out the current one. */
export interface TokenKeeper {
  /** The token now (as handed out last). */
  readonly accessToken: string;
  /**
   * The token to hand out now: waits for a renewal in flight (the token it would end is never
   * served), takes another process's renewal from the store, renews first when stale.
   */
  fresh(): Promise<ServedToken>;
  /**
   * A token after the service refused `accessToken` (a 401: the project's rules): the current one when it
   * is another, else a renewal whatever the lifetime left (one across processes, as always).
   */
  refused(accessToken: string): Promise<ServedToken>;
  /** Stops the timers; waits for a renewal in flight so that the pair it brings is stored (bounded by --timeout). */
  stop(): Promise<void>;
}

/** What the keeper follows: the profile in the store (undefined for MMAUTH_TOKEN, which nothing renews). */
export interface KeeperOptions {
  follower?: ProfileFollower | undefined;
  /** false for a profile that cannot renew: its token is kept until it expires. */
  canRenew: boolean;
  /** The profile the token belongs to (for a renewal after a refusal). */
  profileName?: string | undefined;
  /** Who renews after a refusal instead of this process (the agent): the token to use then. */
  renewAfterRefusal?: ((accessToken: string) => Promise<StoredToken>) | undefined;
}

/** A warning sink that says each kind of line at most once per WARNING_INTERVAL_MS. */
function rateLimited(onWarning: (line: string) => void, nowMs: () => number): (kind: string, line: string) => void {
  const lastSaid = new Map<string, number>();
  return (kind, line) => {
    const at = lastSaid.get(kind);
    if (at !== undefined && nowMs() - at < WARNING_INTERVAL_MS) return;
    lastSaid.set(kind, nowMs());
    onWarning(line);
  };
}

/**
 * Starts keeping `first` (what usableAccessToken handed out) valid for an `exec` child. A timer
 * renews it through usableAccessToken (the same freshness rule, staleAtMs, and single flight across
 * processes as `token`) before it goes stale; `onToken` gets each new token the moment it is stored,
 * before it is first presented, and each token another process stored (the follower).
 * A renewal that fails is retried with backoff (1 s doubling to 60 s) while the token lasts, with
 * rate-limited warnings. A profile rebound to another origin or client stops the renewals (N11).
 */
export function keepTokenFresh(
  first: { accessToken: string; stored: StoredToken | undefined },
  options: UsableTokenOptions,
  ctx: AppContext,
  onToken: (accessToken: string) => void,
  onWarning: (line: string) => void,
  keeperOptions: KeeperOptions,
): TokenKeeper {
  const { follower } = keeperOptions;
  let canRenew = keeperOptions.canRenew;
  let current = first;
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let backoffMs = 1_000;
  let isStopped = false;
  let isRebound = false;
  const warn = rateLimited(onWarning, () => ctx.nowMs());
  const guard = refusalGuard(
    async (accessToken) =>
      isAcceptedAtTokenInfo(await ctx.openStore(), keeperOptions.profileName ?? '', accessToken, options.timeout, ctx),
    () => ctx.nowMs(),
  );

  const adopt = (token: StoredToken) => {
    if (token.accessToken === current.accessToken) return;
    current = { accessToken: token.accessToken, stored: token };
    onToken(token.accessToken);
  };
  const served = (): ServedToken => {
    const stored = current.stored;
    const leftS = stored === undefined ? undefined : secondsLeft(stored, ctx.nowMs());
    return {
      accessToken: current.accessToken,
      expiresInSeconds: leftS === undefined ? null : Math.max(0, leftS),
      expiresAt: stored?.expiresAt ?? null,
    };
  };
  const isCurrentFresh = () => current.stored === undefined || isFresh(current.stored, ctx.nowMs(), options.minTtl);

  /** Takes what another process stored; says once when the profile stopped being this grant. */
  const sync = async () => {
    if (follower === undefined || isRebound) return;
    const state = await follower.read().catch(() => undefined);
    if (state?.kind === 'token') {
      adopt(state.token);
      schedule();
    } else if (state?.kind === 'rebound') {
      isRebound = true;
      canRenew = false;
      clearTimeout(timer);
      onWarning(
        'the profile was removed, renamed or pointed at another server or client: exec stops renewing; the child keeps the current token until it expires',
      );
    } else if (state?.kind === 'no_token') {
      warn('no_token', "the profile's token was removed (logout or revoke): the child's token may no longer work");
    }
  };

  const renew = () =>
    (inFlight ??= (async () => {
      try {
        const choice = await usableAccessToken(options, ctx, (line) => warn('renewal', line), adopt);
        if (choice.stored !== undefined) adopt(choice.stored);
        if (isCurrentFresh()) backoffMs = 1_000;
      } catch (error) {
        warn('renewal', `could not renew the token: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        inFlight = undefined;
        schedule();
      }
    })());

  const schedule = () => {
    if (isStopped || !canRenew) return;
    clearTimeout(timer);
    const stored = current.stored;
    if (stored === undefined) return;
    if (isCurrentFresh()) {
      const at = staleAtMs(stored, options.minTtl);
      if (at === undefined) return;
      timer = setTimeout(() => void renew(), Math.max(MIN_DELAY_MS, at - ctx.nowMs()));
      return;
    }
    // Still stale after a try: again after a while, as long as the token lasts.
    if (judgeStoredToken(stored, ctx.nowMs()) === 'expired') {
      warn('expired', 'the token has expired and could not be renewed; trying again every minute');
      backoffMs = MAX_BACKOFF_MS;
    }
    timer = setTimeout(() => void renew(), Math.max(MIN_DELAY_MS, backoffMs));
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  };

  /** The token after the service refused `accessToken`: see TokenKeeper.refused. */
  const refusedNow = async (accessToken: string): Promise<ServedToken> => {
    if (inFlight !== undefined) await inFlight;
    const elsewhere = keeperOptions.renewAfterRefusal;
    if (elsewhere !== undefined) {
      if (current.accessToken === accessToken) adopt(await elsewhere(accessToken));
      schedule();
      return served();
    }
    const name = keeperOptions.profileName;
    if (current.accessToken !== accessToken || !canRenew || name === undefined) return served();
    // Soon after a refusal renewed, a further one renews only when token info no longer accepts the token (P4).
    if (!(await guard.shouldRenew(accessToken))) return served();
    if (inFlight !== undefined) await inFlight;
    const stored = current.stored;
    if (current.accessToken !== accessToken || stored === undefined) return served();
    guard.renewed();
    const target = {
      profileName: name,
      store: await ctx.openStore(),
      timeoutSeconds: options.timeout,
      onStored: adopt,
    };
    await (inFlight = renewToken(stored, { ...target, isAccessTokenRefused: true }, ctx)
      .then(adopt)
      .finally(() => {
        inFlight = undefined;
        schedule();
      }));
    return served();
  };

  let syncing: Promise<void> | undefined;
  const startSync = () =>
    (syncing ??= sync().finally(() => {
      syncing = undefined;
    }));
  // Also while its own renewal is in flight: it may be waiting for the lock another process's renewal
  // holds, and that one's token must reach the child now (its own stored token is adopted already).
  follower?.onChange(() => void startSync());
  schedule();
  return {
    get accessToken() {
      return current.accessToken;
    },
    async fresh() {
      if (inFlight !== undefined) await inFlight;
      if (follower?.hasChanged() === true) void startSync();
      if (syncing !== undefined) await syncing;
      if (canRenew && !isCurrentFresh()) await renew();
      return served();
    },
    async refused(accessToken) {
      // The child is told nothing by its 401s; the user is, once in a while, when no other token comes of them.
      const served = await refusedNow(accessToken).catch((error: unknown) => {
        warn(
          'refused',
          `the service refused the child's token (HTTP 401) and it could not be renewed: ${error instanceof Error ? error.message : String(error)}`,
        );
        throw error;
      });
      if (served.accessToken === accessToken) {
        warn(
          'refused',
          "the service refused the child's token (HTTP 401) and mmauth has no other to give it (token info still accepts it, or it cannot be renewed here): the child's calls may keep failing; mmauth status --check says whether the token lives",
        );
      }
      return served;
    },
    async stop() {
      isStopped = true;
      clearTimeout(timer);
      follower?.close();
      if (inFlight !== undefined) await inFlight;
    },
  };
}
