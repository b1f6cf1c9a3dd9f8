import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, renameSync, rmSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import {
  classify,
  fingerprint,
  identityOf,
  isUnder,
  ripgrepArgs,
  SCAN_GLOBS,
  scanOf,
  scanRunsLater,
  type RunsLaterScan,
} from './runs-later.js';
import { shellWord } from '../util/shell-word.js';

/**
 * What the sandboxed child changed of what runs later (runs-later.ts): the scan before it, made in
 * the background while exec starts (ripgrep's listing, and on Linux find's list of every directory
 * with its identity), and the review after it, which reads again only the directories that changed.
 */

/**
 * Runs ripgrep (`rgArgs`, its output in `listing`) and, beside it, GNU find (`findArgs`, its output
 * in `directories`) from one shell: one process from here (a process costs this one a fork of all
 * its memory; the shell's own are cheap). Resolves with find's exit code, or -1 when none ran.
 */
function runBoth(
  rgArgs: readonly string[],
  listing: string,
  findArgs: readonly string[] | undefined,
  directories: string,
): Promise<number> {
  const rg = `rg ${rgArgs.map(shellWord).join(' ')} > ${shellWord(listing)}`;
  const script =
    findArgs === undefined
      ? `${rg}; exit 255`
      : `find ${findArgs.map(shellWord).join(' ')} > ${shellWord(directories)} & ${rg}; wait $!`;
  return new Promise((resolve) => {
    try {
      const child = spawn('/bin/sh', ['-c', script], { stdio: 'ignore' });
      child.once('error', () => resolve(-1));
      child.once('close', (code) => resolve(code === 255 ? -1 : (code ?? -1)));
    } catch {
      resolve(-1);
    }
  });
}

/** `file`'s content, then `file` removed; '' when unreadable. */
function takeFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * find's records (`d INODE CTIME PATH` for a directory, its ctime as seconds with nine or more
 * decimals; `l PATH` for a symbolic link, which ripgrep does not list): the directories' identities
 * as RunsLaterScan.dirs holds them, and the links.
 */
function findRecordsOf(text: string): { dirs: Map<string, string>; links: string[] } {
  const dirs = new Map<string, string>();
  const links: string[] = [];
  for (const record of text.split('\0')) {
    if (record.startsWith('l ')) {
      links.push(record.slice(2));
      continue;
    }
    const match = /^d (\d+) (\d+)\.(\d+) (.+)$/s.exec(record);
    if (match === null) continue;
    const [, inode = '', seconds = '', fraction = '', path = ''] = match;
    const ns = BigInt(seconds) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
    dirs.set(path, `${inode} ${ns}`);
  }
  return { dirs, links };
}

/**
 * Starts scanRunsLater's scan of `roots` in the background (ripgrep, and on Linux GNU find listing
 * every directory with its identity, and every symbolic link, for the review), their output in files in `workDir` (removed
 * once read). Resolves with the scan; its `dirs` is undefined where find is missing or failed (the
 * review then scans the roots again). Never rejects.
 */
export function scanInBackground(roots: readonly string[], workDir: string): Promise<RunsLaterScan> {
  const listing = join(workDir, 'runs-later.list');
  const directories = join(workDir, 'directories.list');
  const findArgs =
    process.platform === 'linux'
      ? [
          '-P',
          ...roots,
          '(',
          '-type',
          'd',
          '-printf',
          'd %i %C@ %p\\0',
          ')',
          '-o',
          '(',
          '-type',
          'l',
          '-printf',
          'l %p\\0',
          ')',
        ]
      : undefined;
  const ran = runBoth(ripgrepArgs(roots, SCAN_GLOBS), listing, findArgs, directories);
  return ran.then((findCode) => {
    const files = takeFile(listing)
      .split('\0')
      .filter((path) => path !== '');
    const found = findCode === 0 ? findRecordsOf(takeFile(directories)) : undefined;
    rmSync(directories, { force: true });
    // Links count as what was there before (a user's own `.mcp.json` link is no plant of the child's).
    return scanOf(roots, [...files, ...(found?.links ?? [])], found?.dirs);
  });
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
