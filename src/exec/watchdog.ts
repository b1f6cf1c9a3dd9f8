import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The state reviewRunsLater compares with, as JSON carries it (scanRunsLater's maps as entries). */
export interface WatchdogReview {
  /** The writable roots (real paths). */
  roots: string[];
  /** Runs-later paths present before the child, with their identities. */
  present: Array<[string, string]>;
  /** On-purpose files before the child, with their fingerprints. */
  onPurpose: Array<[string, string]>;
}

/** What else a watchdog ends and removes: the engine's helper processes, directories (its sockets' among them), placeholders, and the review of what the child planted. */
export interface WatchdogExtras {
  pids?: number[];
  dirs?: string[];
  placeholders?: string[];
  review?: WatchdogReview;
}

/** The orders a watchdog reads (watchdog-main.ts): the child's pid and the extras, `dirs` with the private directory. */
export interface WatchdogOrders extends WatchdogExtras {
  pid: number;
}

/** A running watchdog; `release()` tells it exec ended the child itself (it exits, doing nothing). */
export interface Watchdog {
  release(): void;
}

/**
 * Starts the watchdog of `childPid` (dist/watchdog.cjs, built from watchdog-main.ts: a Node process of its own session, so the
 * terminal's Ctrl-C does not reach it; its stdin a pipe from this process, which carries its orders:
 * on no command line), with `extras` (a sandbox's engine helpers, temp dir, placeholders and the
 * review of what runs later) to end, remove and review too should this process die without its
 * clean-up. Never throws: without a watchdog, a `kill -9` of exec leaves the child running, as before.
 */
export function startWatchdog(childPid: number, privateDir: string, extras: WatchdogExtras = {}): Watchdog {
  try {
    // The command-line bundle's directory (dist/), where the build puts the watchdog beside it.
    const main = join(__dirname, 'watchdog.cjs');
    const watchdog = spawn(process.execPath, [main], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      env: {},
    });
    watchdog.on('error', () => undefined);
    watchdog.stdin?.on('error', () => undefined);
    const orders: WatchdogOrders = {
      ...extras,
      pid: childPid,
      dirs: [...(privateDir === '' ? [] : [privateDir]), ...(extras.dirs ?? [])],
    };
    watchdog.stdin?.write(`${JSON.stringify(orders)}\n`);
    watchdog.unref();
    return {
      release() {
        watchdog.stdin?.end('done\n');
      },
    };
  } catch {
    return { release: () => undefined };
  }
}
