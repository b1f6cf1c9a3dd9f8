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
