import type { AppContext } from '../../context.js';
import { isFresh, renewalMarginS } from '../../grant/freshness.js';
import type { StoredToken } from '../../store/profile.js';
import { judgeStoredToken, secondsLeft } from '../../store/token-state.js';
import { usableAccessToken, type UsableTokenOptions } from '../shared/usable-token.js';
import type { ServedToken } from './token-server.js';

/** The longest wait between two tries of a failing renewal, in ms. */
const MAX_BACKOFF_MS = 60_000;

/** Keeps an `exec` child's token valid: renews before it goes stale, and hands out a fresh one on demand. */
export interface TokenKeeper {
  /** The token now (as handed out last). */
  readonly accessToken: string;
  /** A fresh token: the current one, or renewed first (one renewal however many callers wait). */
  fresh(): Promise<ServedToken>;
  /** Stops the timers. */
  stop(): void;
}

/** When `token` goes stale (the margin `token` uses: renewalMarginS), in epoch ms; undefined for no expiry. */
function staleAtMs(token: StoredToken, minTtlS: number): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  return Date.parse(token.expiresAt) - renewalMarginS(token, minTtlS) * 1000;
}

/**
 * Starts keeping `first` (what usableAccessToken handed out) valid for an `exec` child: a timer
 * renews it through usableAccessToken (the same freshness rule and single flight across processes
 * as `token`) before it goes stale, and `onToken` gets each new one (the token file); a renewal that
 * fails is retried with backoff (1 s doubling to 60 s), with `onWarning`, while the token lasts.
 * A profile that cannot renew (`canRenew` false) keeps its token until it expires.
 */
export function keepTokenFresh(
  first: { accessToken: string; stored: StoredToken | undefined },
  options: UsableTokenOptions,
  ctx: AppContext,
  onToken: (accessToken: string) => void,
  onWarning: (line: string) => void,
  canRenew = true,
): TokenKeeper {
  let current = first;
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let backoffMs = 1_000;
  let isStopped = false;

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

  const renew = () =>
    (inFlight ??= (async () => {
      try {
        const choice = await usableAccessToken(options, ctx, onWarning);
        if (choice.accessToken !== current.accessToken) onToken(choice.accessToken);
        current = { accessToken: choice.accessToken, stored: choice.stored };
        if (isCurrentFresh()) backoffMs = 1_000;
      } catch (error) {
        onWarning(`could not renew the token: ${error instanceof Error ? error.message : String(error)}`);
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
      timer = setTimeout(() => void renew(), Math.max(0, at - ctx.nowMs()));
      return;
    }
    // Still stale after a try: again after a while, as long as the token lasts.
    if (judgeStoredToken(stored, ctx.nowMs()) === 'expired') {
      onWarning('the token has expired and could not be renewed; trying again every minute');
      backoffMs = MAX_BACKOFF_MS;
    }
    timer = setTimeout(() => void renew(), backoffMs);
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  };

  schedule();
  return {
    get accessToken() {
      return current.accessToken;
    },
    async fresh() {
      if (!isCurrentFresh()) await renew();
      return served();
    },
    stop() {
      isStopped = true;
      clearTimeout(timer);
    },
  };
}
