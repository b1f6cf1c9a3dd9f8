import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fingerprint, identityOf, isListed, isUnder, SCAN_GLOBS, scanOf, type RunsLaterScan } from './runs-later.js';
import { indexOf, loadIndex, refreshIndex, saveIndex, type ScanIndex } from './scan-index.js';
import { findRecordsOf, type FindAnswer } from './find-records.js';
import { findArgsFor, identitiesNow, ripgrepArgs, runBoth, takeFile, type ListingShell } from './scan-listing.js';

/**
 * What the sandboxed child changed of what runs later (runs-later.ts): the scan before it, made
 * while exec starts (from the last run's index of these roots, reading only the directories that
 * changed since; else ripgrep's listing and, on Linux, find's list of every directory with its
 * identity, in the background), and the review after it, which reads again only the directories
 * the child changed and saves the index for the next run.
 */

/**
 * Scans `roots` (the writable roots, real paths) at any depth: every repository's git directory
 * and what git runs from there (config, config.worktree, commondir, hooks, modules' configs and
 * hooks, the directory core.hooksPath names), a `.git` file (a gitdir redirection), hook managers'
 * files, shell, login and desktop start-up files, ssh's, editors' and agents' settings, mmauth's
 * and the engine's installed packages; and the on-purpose files (ON_PURPOSE_GLOBS) with their
 * fingerprints. Never throws.
 */
export function scanRunsLater(roots: readonly string[]): RunsLaterScan {
  const found = spawnSync('rg', ripgrepArgs(roots, SCAN_GLOBS), { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return scanOf(
    roots,
    (found.stdout ?? '').split('\0').filter((path) => path !== ''),
  );
}

/** How many entries a scan from the last run's index reads at most before it lists every file instead. */
const INDEX_BUDGET = 20_000;

/** The scan from an index brought up to date. */
const scanFromIndex = (roots: readonly string[], index: ScanIndex, readAtMs: number): RunsLaterScan =>
  scanOf(roots, [...index.listed.values()].flat(), {
    index,
    readAtMs,
    source: `the last run's index (${index.reread ?? 0} of ${index.dirs.size} directories read again)`,
  });

/** The scan made beside exec (scanInBackground), and the restat for the review from the same shell. */
export interface BackgroundScan {
  /** The scan, once made. Never rejects. */
  scan: Promise<RunsLaterScan>;
  /**
   * Once the child has exited: find's answer about the scan's index's directories as they are now
   * (ListingShell.restat, beside this process: for reviewRunsLater's `restatted`), asked once
   * however often called; undefined where it is not had so (the review then restats them itself).
   * Never rejects.
   */
  restat(): Promise<FindAnswer | undefined>;
  /** Lets the shell go without a restat; idempotent. */
  end(): void;
}

/**
 * The scan of `roots` (scanRunsLater's) for the policy, made beside exec. With the index in
 * `indexFile` (the last run's, scan-index.ts) it reads only the directories changed since, after
 * find's restat of them beside this process (the engine's load goes on meanwhile). Else ripgrep and,
 * on Linux, GNU find listing every directory with its identity and every symbolic link, their output
 * in files in `workDir` (removed once read, before the child starts); the scan's `index` is
 * undefined where find is missing or failed (the review then scans the roots again). Never throws.
 */
export function scanInBackground(roots: readonly string[], workDir: string, indexFile?: string): BackgroundScan {
  const saved = indexFile === undefined ? undefined : loadIndex(indexFile, roots);
  if (saved === undefined) return listEveryFile(roots, workDir);
  const readAtMs = Date.now();
  const earlier = saved.found === undefined ? undefined : { text: saved.found, identities: saved.dirs };
  const { identities, shell } = identitiesNow([...saved.dirs.keys()], workDir, earlier);
  let instead: BackgroundScan | undefined;
  const scan: Promise<RunsLaterScan> = identities.then((now) => {
    const index = refreshIndex(saved, isListed, INDEX_BUDGET, now);
    if (index !== undefined) return scanFromIndex(roots, index, readAtMs);
    shell.end();
    instead = listEveryFile(roots, workDir);
    return instead.scan.then((listed) => ({
      ...listed,
      source: `${listed.source ?? ''}: over ${INDEX_BUDGET} entries changed since the last run`,
    }));
  });
  const fromIndex = { restat: restatOf(scan, shell) };
  return {
    scan,
    restat: () => (instead ?? fromIndex).restat(),
    end: () => {
      shell.end();
      instead?.end();
    },
  };
}

/**
 * The scan's index's directories restatted by `shell`, once however often asked; undefined for a
 * scan without an index, or one small enough that the review's own lstat (about 20 µs a directory)
 * answers sooner than find, which waits its turn for a core: the review restats those itself.
 */
function restatOf(scan: Promise<RunsLaterScan>, shell: ListingShell): () => Promise<FindAnswer | undefined> {
  let restatting: Promise<FindAnswer | undefined> | undefined;
  let made: RunsLaterScan | undefined;
  void scan.then((settled) => (made = settled)).catch(() => undefined);
  const restatFrom = (settled: RunsLaterScan) => {
    const dirs = [...(settled.index?.dirs.keys() ?? [])];
    if (dirs.length > IN_PROCESS_RESTAT) return shell.restat(dirs);
    shell.end();
    return Promise.resolve(undefined);
  };
  // Once the scan is made, find is asked at once, not a microtask later: the caller goes on with
  // work of its own (the engine's run ended) while find answers on another core.
  return () => (restatting ??= made === undefined ? scan.then(restatFrom) : restatFrom(made));
}

/** How many directories an index may hold for the review to restat them itself rather than ask find. */
const IN_PROCESS_RESTAT = 128;

/** scanInBackground's first run in `roots`: every file listed by ripgrep, every directory by find. */
function listEveryFile(roots: readonly string[], workDir: string): BackgroundScan {
  const readAtMs = Date.now();
  const listing = join(workDir, 'runs-later.list');
  const directories = join(workDir, 'directories.list');
  const findArgs = process.platform === 'linux' ? findArgsFor(roots) : undefined;
  const shell = runBoth(ripgrepArgs(roots, SCAN_GLOBS), listing, findArgs, directories);
  const scan = shell.listed.then((findCode) => {
    // Links count as what was there before (a user's own `.mcp.json` link is no plant of the child's).
    const files = [
      ...takeFile(listing)
        .split('\0')
        .filter((path) => path !== ''),
    ];
    const found = findCode === 0 ? findRecordsOf(takeFile(directories)) : undefined;
    rmSync(directories, { force: true });
    if (found === undefined) return scanOf(roots, files, { readAtMs, source: 'every file listed (ripgrep)' });
    files.push(...found.links);
    const index = indexOf(files.filter(isListed), found.dirs);
    const source = `every file listed (ripgrep, and find for the ${found.dirs.size} directories)`;
    return scanOf(roots, files, { index, readAtMs, source });
  });
  return { scan, restat: restatOf(scan, shell), end: shell.end };
}

/** What the child left that runs later, and what it changed that the user runs on purpose. */
export interface RunsLaterReview {
  /** New or replaced runs-later paths, each moved aside to `movedTo` ('' when it could not be). */
  neutralised: Array<{ path: string; movedTo: string }>;
  /** On-purpose files the child created or changed. */
  changed: string[];
}

/**
 * After the child exited: scans `roots` again (from `before`'s index: only the directories that
 * changed, a directory new there whole; else every file) and moves every runs-later path that is
 * new or replaced (another inode: `mv .git` and a new one) aside to `NAME.mmauth-blocked-XXXXXX`,
 * where neither git nor a shell looks (a new repository whole, not its parts after it); lists the
 * on-purpose files created or changed. `restatted`: find's answer about the index's directories
 * taken after the child exited (BackgroundScan.restat), else each is lstat'ed here. With
 * `indexFile`, saves the index there for the next run (every directory changed since `before`
 * began is read again then), with find's answer when it is about the same directories. Never throws.
 */
export function reviewRunsLater(
  roots: readonly string[],
  before: RunsLaterScan,
  indexFile?: string,
  restatted?: FindAnswer,
): RunsLaterReview {
  const index =
    before.index === undefined ? undefined : refreshIndex(before.index, isListed, Infinity, restatted?.identities);
  const after = index === undefined ? scanRunsLater(roots) : scanFromIndex(roots, index, Date.now());
  // What was there before is looked at again in any case (an existing runs-later path is walled, an on-purpose file may change in place).
  for (const path of before.present.keys()) {
    const identity = after.present.has(path) ? undefined : identityOf(path);
    if (identity !== undefined) after.present.set(path, identity);
  }
  for (const file of before.onPurpose.keys()) {
    if (!after.onPurpose.has(file) && identityOf(file) !== undefined) after.onPurpose.set(file, fingerprint(file));
  }
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
  if (indexFile !== undefined && index !== undefined) {
    // Only a few directories' identities changed since the index was saved (the working directory's
    // do on every run: the engine's placeholders come and go): it stays as saved, and the next run
    // reads those few again, instead of this run writing every directory's again.
    const reread = (before.index?.reread ?? 0) + (index.reread ?? 0);
    // An index saved without find's answer is saved again with it, once.
    const isKept =
      before.index?.isReshaped === false &&
      index.isReshaped === false &&
      reread <= KEPT_REREAD &&
      (before.index.found !== undefined || restatted === undefined);
    if (isKept) touch(indexFile);
    // find's answer was about before's directories, in their order: the index's own when not reshaped.
    else
      saveIndex(
        indexFile,
        roots,
        index,
        before.readAtMs ?? 0,
        index.isReshaped === false ? restatted?.text : undefined,
      );
  }
  return { neutralised, changed };
}

/** How many directories whose identity alone changed an index may leave for the next run to read again. */
const KEPT_REREAD = 16;

/** Sets `file`'s times to now (the indexes kept are the ones used last). Never throws. */
function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Only which index goes first depends on it.
  }
}
