import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../util/process-alive.js';

/**
 * What runs that died without their clean-up (a `kill -9` before exec's watchdog started, a proxy
 * killed) leave in this user's runtime roots: their private directories (`mmauth-exec-*`,
 * `mmauth-proxy-*`, `mmauth-sandbox-*`). Each has, beside it in the root (where no sandboxed
 * child looks), `NAME.pid` naming the run that made it; a directory whose run is gone is removed by
 * the next `exec --sandbox` or `doctor`.
 */

/** The private directories' prefixes (createPrivateDir's). */
const RUN_DIR = /^mmauth-(exec|proxy|sandbox)-/;

/** The file beside a run's private directory `dir` that names its run's pid. */
export const pidFileOf = (dir: string): string => `${dir}.pid`;

/** Records this process as `dir`'s run (`dir.pid`, 0600). Never throws: an unmarked directory is only never swept. */
export function markRun(dir: string): void {
  try {
    writeFileSync(pidFileOf(dir), String(process.pid), { mode: 0o600 });
  } catch {
    // Left unmarked: kept, as a live run's.
  }
}

/**
 * Removes the private directories in `roots` (this user's runtime roots) whose recorded run is no
 * longer running, and their pid files (also a pid file whose directory a watchdog removed); an
 * unmarked one (an older mmauth's) or one of a live pid is left. A pid used again
 * since only keeps a directory longer. Returns the paths removed. Never throws.
 */
export function removeDeadRuns(roots: readonly string[]): string[] {
  const removed: string[] = [];
  for (const root of roots) {
    let names: string[];
    try {
      names = readdirSync(root).filter((name) => RUN_DIR.test(name) && name.endsWith('.pid'));
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = join(root, name.slice(0, -'.pid'.length));
      try {
        const pid = Number(readFileSync(pidFileOf(dir), 'utf8').trim());
        if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
        rmSync(dir, { recursive: true, force: true });
        rmSync(pidFileOf(dir), { force: true });
        removed.push(dir);
      } catch {
        // Unmarked, or not ours to read: left.
      }
    }
  }
  return removed;
}
