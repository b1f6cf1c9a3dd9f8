import { claimSignals } from './signal-claims.js';

/**
 * Resolves once `signal` is aborted, at once when it already is, or when one of `signals` (process
 * signals, say SIGTERM, claimed meanwhile: signal-claims.ts) arrives first: how a serving command
 * waits for Ctrl-C. Never rejects.
 */
export function whenAborted(signal: AbortSignal, signals: readonly NodeJS.Signals[] = []): Promise<void> {
  const release = claimSignals(signals);
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
    for (const name of signals) process.once(name, () => resolve());
  }).finally(release);
}

/**
 * `work`, or a rejection with `stopped()` as soon as `signal` aborts (at once when it already has).
 * The work itself goes on, unobserved: how a caller stops waiting for a renewal without cutting it
 * off. `signal` undefined: `work` itself.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, stopped: () => Error): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(stopped());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
