import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, renameSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { classify, fingerprint, identityOf, isUnder, scanOf, scanRunsLater, type RunsLaterScan } from './runs-later.js';
import type { WalkOrder, WalkResult } from './scan-worker.js';

/**
 * What the sandboxed child changed of what runs later (runs-later.ts): the scan before it, made in
 * a worker thread while exec starts (scan-worker.ts: what the globs name, every link, every
 * directory with its identity), and the review after it, which reads again only the directories
 * that changed.
 */

/**
 * Starts scanRunsLater's scan of `roots` in the background: a worker thread walks them (scan-worker.ts,
 * dist/scan-worker.cjs beside the command-line bundle), listing what the scan's globs name, the links
 * and every directory's identity for the review. Where no worker can start it scans as
 * scanRunsLater does, and the review then scans the roots again. Resolves with the scan. Never
 * rejects.
 */
export async function scanInBackground(roots: readonly string[]): Promise<RunsLaterScan> {
  try {
    const { Worker } = await import('node:worker_threads');
    // The command-line bundle's directory (dist/), where the build puts the worker beside it.
    const order: WalkOrder = { mmauthScanRoots: [...roots] };
    const worker = new Worker(join(__dirname, 'scan-worker.cjs'), { workerData: order });
    const result = await new Promise<WalkResult>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the scan's worker exited ${code}`)));
    });
    void worker.terminate();
    return scanOf(roots, result.files, new Map(result.dirs));
  } catch {
    return scanRunsLater(roots);
  }
}

/** What the child left that runs later, and what it changed that the user runs on purpose. */
export interface RunsLaterReview {
  /** New or replaced runs-later paths, each moved aside to `movedTo` ('' when it could not be). */
  neutralised: Array<{ path: string; movedTo: string }>;
  /** On-purpose files the child created or changed. */
  changed: string[];
}

/**
 * After the child exited: scans `roots` again and moves every runs-later path that is new or
 * replaced (another inode: `mv .git` and a new one) aside to `NAME.mmauth-blocked-XXXXXX`, where
 * neither git nor a shell looks (a new repository whole, not its parts after it); lists the
 * on-purpose files created or changed. Never throws.
 */
export function reviewRunsLater(roots: readonly string[], before: RunsLaterScan): RunsLaterReview {
  const after = before.dirs === undefined ? scanRunsLater(roots) : rescanChanged(before, before.dirs);
  const fresh = [...after.present]
    .filter(([path, identity]) => before.present.get(path) !== identity)
    .map(([path]) => path);
  const outermost = fresh.filter((path) => !fresh.some((other) => other !== path && isUnder(path, other)));
  const neutralised = outermost.map((path) => {
    const movedTo = `${path}.mmauth-blocked-${randomBytes(3).toString('hex')}`;
    try {
      renameSync(path, movedTo);
      return { path, movedTo };
    } catch {
      return { path, movedTo: '' };
    }
  });
  const changed = [...after.onPurpose]
    .filter(([path, print]) => before.onPurpose.get(path) !== print)
    .map(([path]) => path)
    .sort();
  return { neutralised, changed };
}

/** A directory's identity as RunsLaterScan.dirs holds it (inode and ctime in ns), or undefined when it is gone. */
export function dirIdentity(path: string): string | undefined {
  try {
    const stats = lstatSync(path, { bigint: true });
    return stats.isDirectory() ? `${stats.ino} ${stats.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scan after the child from what changed since `before`: only the directories whose identity
 * changed are read (a new, renamed or removed entry changes its directory's ctime, which no process
 * can set back), and a directory that is new there is read whole; the paths `before` held are
 * looked at again in any case (an existing runs-later file is walled, an on-purpose one may change
 * in place).
 */
function rescanChanged(before: RunsLaterScan, dirs: Map<string, string>): RunsLaterScan {
  const touched: string[] = [];
  // Every entry of `dir`, and of each directory below it that `isNew` says is new there (read whole).
  const read = (dir: string, isNew: (path: string) => boolean) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      touched.push(path);
      if (entry.isDirectory() && isNew(path)) read(path, () => true);
    }
  };
  const inodeOf = (identity: string | undefined) => identity?.split(' ')[0];
  for (const [dir, identity] of dirs) {
    if (dirIdentity(dir) !== identity) read(dir, (path) => inodeOf(dirs.get(path)) !== inodeOf(dirIdentity(path)));
  }
  const { paths, onPurpose: onPurposeFiles } = classify(touched);
  for (const path of before.present.keys()) paths.add(path);
  for (const file of before.onPurpose.keys()) onPurposeFiles.add(file);
  const present = new Map<string, string>();
  for (const path of paths) {
    const identity = identityOf(path);
    if (identity !== undefined) present.set(path, identity);
  }
  const onPurpose = new Map<string, string>();
  for (const file of onPurposeFiles) if (identityOf(file) !== undefined) onPurpose.set(file, fingerprint(file));
  return { walled: [], present, onPurpose };
}
