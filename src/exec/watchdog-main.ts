/**
 * The watchdog process of an `exec` (startWatchdog), run by Node as a program of its own. Its
 * stdin, a pipe from `exec`, carries one JSON line of orders (WatchdogOrders), then `done` when
 * exec ended its child itself. End of input without `done` means exec died (a `kill -9` runs no
 * clean-up of its own): the child and the sandbox engine's helpers get SIGTERM (SIGKILL 3 s later),
 * the private directories go, and so do the placeholders the engine made (only empty read-only
 * files, and a directory they leave empty); then, once no process of the run is left, what the
 * child planted that would run later is moved aside, as exec does after a child that exited
 * (reviewRunsLater). So nothing of the run outlives its mmauth unnoticed (attacks N7).
 */
import { rmSync } from 'node:fs';
import type { WatchdogOrders } from './watchdog.js';
import { isAlive } from '../util/process-alive.js';
import { removePlaceholder } from './engine-placeholders.js';

const signal = (pids: readonly number[], name: NodeJS.Signals) => {
  for (const pid of pids) {
    // One process each: 0 or a negative number would name a whole group.
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, name);
    } catch {
      // Gone already.
    }
  }
};

/** Resolves once none of `pids` runs, or after `ms`. */
async function waitForEnd(pids: readonly number[], ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (pids.some(isAlive) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** What exec would have done after its child, done here after exec died. */
async function cleanUp(orders: WatchdogOrders): Promise<void> {
  const pids = [orders.pid, ...(orders.pids ?? [])];
  signal(pids, 'SIGTERM');
  // The token file and the sockets go at once; what the child planted, once it can plant no more.
  for (const dir of orders.dirs ?? []) rmSync(dir, { recursive: true, force: true });
  for (const path of orders.placeholders ?? []) removePlaceholder(path);
  await waitForEnd(pids, 3_000);
  signal(pids, 'SIGKILL');
  await waitForEnd(pids, 1_000);
  if (orders.review !== undefined) {
    const { reviewRunsLater } = await import('./runs-later-changes.js');
    const { roots, present, onPurpose } = orders.review;
    reviewRunsLater(roots, { walled: [], present: new Map(present), onPurpose: new Map(onPurpose) });
  }
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  input += chunk;
});
process.stdin.on('end', () => {
  const [first = '', ...rest] = input.split('\n');
  if (rest.includes('done')) process.exit(0);
  let orders: WatchdogOrders;
  try {
    orders = JSON.parse(first) as WatchdogOrders;
  } catch {
    process.exit(0);
  }
  cleanUp(orders).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
