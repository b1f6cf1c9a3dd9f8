/**
 * The renewal requests this process has sent and not yet settled (decision: what a server mints is
 * stored, whatever happens to the one who asked): a renewal, once sent, is neither cut off by
 * Ctrl-C, a signal or a caller's --timeout, nor left behind by a process that exits; the process
 * waits for it (at most RENEWAL_BUDGET_MS) before it exits.
 */

/** How long a renewal request may take, in ms, whatever its caller's bound: well above --timeout's 30 s default. */
export const RENEWAL_BUDGET_MS = 60_000;

const pending = new Set<Promise<unknown>>();

/** Tracks `work` (a renewal under way) until it settles; returns it. */
export function trackRenewal<T>(work: Promise<T>): Promise<T> {
  pending.add(work);
  const forget = () => void pending.delete(work);
  work.then(forget, forget);
  return work;
}

/**
 * Marks a renewal request as sent from now on (only a request already sent is
 * waited for, never the wait for the lock before it); the returned function (idempotent) marks it
 * settled.
 */
export function markRenewalSent(): () => void {
  let settle: () => void = () => undefined;
  trackRenewal(new Promise<void>((resolve) => (settle = resolve)));
  return () => settle();
}

/** Whether a renewal is under way in this process. */
export function isRenewing(): boolean {
  return pending.size > 0;
}

/**
 * Resolves once every renewal under way has settled (stored, or its grant ended), or after
 * `boundMs`: true when all settled. Never rejects.
 */
export async function renewalsSettled(boundMs: number = RENEWAL_BUDGET_MS): Promise<boolean> {
  if (pending.size === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), boundMs);
  });
  const all = Promise.allSettled([...pending]).then(() => true as const);
  try {
    return await Promise.race([all, bound]);
  } finally {
    clearTimeout(timer);
  }
}
