/**
 * The walk of the scan before a sandboxed child (scanInBackground), run in a worker thread so that
 * it overlaps exec's start (the engine's load holds the main thread) and costs no process: every
 * file under the roots that the scan's globs name (SCAN_GLOBS: by its name, or by a directory it
 * lies in), every symbolic link (links are not followed), and every directory with its identity
 * (inode and ctime in ns, as dirIdentity gives it). Built as dist/scan-worker.cjs.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { HOOK_MANAGER_FILES, STARTUP_DIRS, STARTUP_NAMES } from './runs-later.js';

/** What the worker posts: the files and links found, and each directory's identity. */
export interface WalkResult {
  files: string[];
  dirs: Array<[string, string]>;
}

/** File names the scan lists wherever they are. */
const NAMES = new Set([
  'HEAD',
  '.git',
  'config',
  ...STARTUP_NAMES,
  ...HOOK_MANAGER_FILES,
  '.envrc',
  'Makefile',
  'makefile',
  'GNUmakefile',
  'package.json',
  '.npmrc',
]);

/** Directories whose every file the scan lists (a path ending so). */
const WHOLE_DIRS = [...STARTUP_DIRS, '.husky', '.githooks', 'node_modules/.bin', '.github/workflows'].map(
  (dir) => `/${dir}`,
);

const isWhole = (dir: string): boolean =>
  WHOLE_DIRS.some((suffix) => dir.endsWith(suffix)) || /\/\.git\/modules\/.+\/hooks$/.test(dir);

/** Walks `roots` (WalkResult); a directory it cannot read is left out, with what lies below it. */
export function walk(roots: readonly string[]): WalkResult {
  const files: string[] = [];
  const dirs: Array<[string, string]> = [];
  const visit = (dir: string, isInWhole: boolean) => {
    let entries;
    try {
      const stats = lstatSync(dir, { bigint: true });
      entries = readdirSync(dir, { withFileTypes: true });
      dirs.push([dir, `${stats.ino} ${stats.ctimeNs}`]);
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) visit(path, isInWhole || isWhole(path));
      else if (isInWhole || entry.isSymbolicLink() || NAMES.has(entry.name)) files.push(path);
    }
  };
  for (const root of roots) visit(root, isWhole(root));
  return { files, dirs };
}

/** The worker's data: the roots to walk (scanInBackground passes them). */
export interface WalkOrder {
  mmauthScanRoots: string[];
}

// Run as the scan's worker (and not merely imported, as by a test in a worker of its own).
const order = workerData as Partial<WalkOrder> | undefined;
if (parentPort !== null && Array.isArray(order?.mmauthScanRoots)) parentPort.postMessage(walk(order.mmauthScanRoots));
