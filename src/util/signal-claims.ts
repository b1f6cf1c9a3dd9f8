/**
 * Which process signals a running command handles itself (exec forwards SIGTERM and SIGHUP to its
 * child; the proxy and the agent stop on them), so that the command line's own handler (cli.ts:
 * end the command as Ctrl-C does) steps aside for them. Counted, not listed: claims nest.
 */
const claims = new Map<NodeJS.Signals, number>();

/** Claims `signals` until the returned function is called (once). */
export function claimSignals(signals: readonly NodeJS.Signals[]): () => void {
  for (const name of signals) claims.set(name, (claims.get(name) ?? 0) + 1);
  let isReleased = false;
  return () => {
    if (isReleased) return;
    isReleased = true;
    for (const name of signals) claims.set(name, (claims.get(name) ?? 1) - 1);
  };
}

/** Whether a running command handles `signal` itself. */
export function isClaimed(signal: NodeJS.Signals): boolean {
  return (claims.get(signal) ?? 0) > 0;
}
