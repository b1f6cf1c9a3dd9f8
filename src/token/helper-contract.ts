/**
 * The helper contract: what `token` and `header` do for programs that run them as
 * their token command (Claude Code's apiKeyHelper, Codex's auth.command, Goose). `--deadline`
 * bounds the whole command; `--verify` asks the server about a token the local checks pass: every
 * run asks, but runs that start together (within VERIFY_INTERVAL_MS) share one answer.
 */
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import type { Profile, StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { judgeStoredToken, secondsLeft } from '../store/token-state.js';
import { monotonicMs } from '../util/monotonic.js';
import { askTokenInfo } from './token-check.js';

/** Ms of a --deadline kept for what follows the answer: printing it and exiting (start-up came before). */
export const DEADLINE_MARGIN_MS = 250;

/**
 * Ms within which a token that token info accepted is not asked about again: only runs that start
 * together (a burst of helpers) share an answer. A run after a refusal (a consumer's 401, a few
 * seconds on) always asks: the server may have ended the token since, and a minute's sparing handed
 * the refused token out again.
 */
export const VERIFY_INTERVAL_MS = 2_000;

/** A --deadline as a point on the monotonic clock (monotonicMs), or undefined for none. */
export function deadlineAt(deadlineS: number | undefined): number | undefined {
  return deadlineS === undefined ? undefined : monotonicMs() + deadlineS * 1000 - DEADLINE_MARGIN_MS;
}

/** Ms left before `atMs` (monotonic); Infinity without a deadline. */
export function msLeft(atMs: number | undefined): number {
  return atMs === undefined ? Infinity : Math.max(0, atMs - monotonicMs());
}

/** What beforeDeadline gives when the deadline came first. */
export const TIMED_OUT = Symbol('timed out');

/**
 * `work`'s answer, or TIMED_OUT when the deadline `atMs` (monotonic) comes first. The work is not
 * cancelled; a renewal that must outlive the command runs in a process of its own
 * (detached-renewal.ts), so that what the server mints is stored. Throws what `work` throws before
 * the deadline.
 */
export async function beforeDeadline<T>(work: Promise<T>, atMs: number | undefined): Promise<T | typeof TIMED_OUT> {
  if (atMs === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), msLeft(atMs));
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether `token` may still be handed out when a renewal did not finish within --deadline: it has
 * not expired and is good for at least `minTtlS` more seconds (no expiry counts as good).
 */
export function meetsMinTtl(token: StoredToken, nowMs: number, minTtlS: number): boolean {
  if (judgeStoredToken(token, nowMs) === 'expired') return false;
  const leftS = secondsLeft(token, nowMs);
  return leftS === undefined || leftS >= minTtlS;
}

/** `deadline_exceeded` (exit 3): nothing usable could be handed out within --deadline. */
export function deadlineExceeded(deadlineS: number, why: string): MmauthError {
  return new MmauthError('deadline_exceeded', `no usable token within ${deadlineS} s: ${why}`);
}

/** Whether token info accepted `token` less than VERIFY_INTERVAL_MS ago (its `verified_at`). */
export function isRecentlyVerified(token: StoredToken, nowMs: number): boolean {
  if (token.verifiedAt === undefined) return false;
  const atMs = Date.parse(token.verifiedAt);
  return nowMs - atMs >= 0 && nowMs - atMs < VERIFY_INTERVAL_MS;
}

/** What token info said of the token --verify asked about. */
export type Verification = 'active' | 'refused';

/**
 * Asks token info about `profile`'s current token (askTokenInfo: spec §4.3; one request, bounded by `timeoutMs`)
 * and records an acceptance in the profile as the token's `verified_at`, so that the next --verify
 * within a minute asks nothing; a token replaced meanwhile is left as it is. Returns what token
 * info said. Throws network and malformed-answer errors, and the store's.
 */
export async function verifyStoredToken(
  profileName: string,
  profile: Profile & { token: StoredToken; baseUrl: string },
  store: ProfileStore,
  timeoutMs: number,
  ctx: AppContext,
): Promise<Verification> {
  const answer = await askTokenInfo(profile, profile.token.accessToken, timeoutMs, ctx);
  if (!answer.isActive) return 'refused';
  const verifiedAt = new Date(ctx.nowMs()).toISOString();
  const accessToken = profile.token.accessToken;
  await store.update(
    profileName,
    (current) =>
      current.token?.accessToken === accessToken ? { ...current, token: { ...current.token, verifiedAt } } : current,
    { mustExist: true },
  );
  return 'active';
}
