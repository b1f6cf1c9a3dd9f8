/**
 * Resolves once `signal` is aborted, at once when it already is, or when one of `signals` (process
 * signals, say SIGTERM) arrives first: how a serving command waits for Ctrl-C. Never rejects.
 */
export function whenAborted(signal: AbortSignal, signals: readonly NodeJS.Signals[] = []): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
    for (const name of signals) process.once(name, () => resolve());
  });
}
