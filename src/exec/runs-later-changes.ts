import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync, type Dirent } from 'node:fs';
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

/**
 * What the sandboxed child changed of what runs later (runs-later.ts): the scan before it, made in
 * the background while exec starts (ripgrep's listing, and on Linux find's list of every directory
 * with its identity), and the review after it, which reads again only the directories that changed.
 */

/** Runs `command` with its stdout in `file` (no pipe to fill while this process is busy); resolves with its exit code, or -1. */
function runInto(command: string, args: readonly string[], file: string): Promise<number> {
  return new Promise((resolve) => {
    let fd: number;
    try {
      fd = openSync(file, 'w', 0o600);
    } catch {
      resolve(-1);
      return;
    }
    try {
      const child = spawn(command, args, { stdio: ['ignore', fd, 'ignore'] });
      child.once('error', () => resolve(-1));
      child.once('close', (code) => resolve(code ?? -1));
    } catch {
      resolve(-1);
    } finally {
      closeSync(fd);
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

/** What find found (findRecordsOf): the files SCAN_GLOBS names and the links, as ripgrep would list them, and every directory's identity. */
interface FindRecords {
  files: string[];
  dirs: Map<string, string>;
}

/**
 * find's records, NUL-separated: `d INODE CTIME PATH` for a directory (its ctime as seconds with
 * nine or more decimals), `l PATH` for a symbolic link (ripgrep lists none), `f PATH` for a file
 * that SCAN_GLOBS names.
 */
function findRecordsOf(text: string): FindRecords {
  const dirs = new Map<string, string>();
  const files: string[] = [];
  for (const record of text.split('\0')) {
    if (record.startsWith('l ') || record.startsWith('f ')) {
      files.push(record.slice(2));
      continue;
    }
    const match = /^d (\d+) (\d+)\.(\d+) (.+)$/s.exec(record);
    if (match === null) continue;
    const [, inode = '', seconds = '', fraction = '', path = ''] = match;
    const ns = BigInt(seconds) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
    dirs.set(path, `${inode} ${ns}`);
  }
  return { files, dirs };
}

/**
 * SCAN_GLOBS as find's tests, one traversal for the files, the links and the directories: a glob
 * of one name (`**\/NAME`) is `-name NAME`, any other `-path` with `**` as `*` (which in find
 * matches across directories). Exclusions are the classification's (a package's own package.json).
 */
export function findArgs(roots: readonly string[]): string[] {
  const tests = SCAN_GLOBS.filter((glob) => !glob.startsWith('!')).flatMap((glob, index) => {
    const pattern = glob.replace(/^\*\*\//, '');
    const test = pattern.includes('/') ? ['-path', `*/${pattern.replaceAll('**', '*')}`] : ['-name', pattern];
    return index === 0 ? test : ['-o', ...test];
  });
  return [
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
    '-o',
    '(',
    '(',
    ...tests,
    ')',
    '-printf',
    'f %p\\0',
    ')',
  ];
}

/**
 * Starts scanRunsLater's scan of `roots` in the background, its output in a file in `workDir`
 * (removed once read): on Linux one GNU find (findArgs) that also lists every directory with its
 * identity and every link, for the review; elsewhere ripgrep, as scanRunsLater, and no directories
 * (the review then scans the roots again), as also where find fails. Resolves with the scan. Never
 * rejects.
 */
export function scanInBackground(roots: readonly string[], workDir: string): Promise<RunsLaterScan> {
  const listing = join(workDir, 'runs-later.list');
  if (process.platform === 'linux') {
    return runInto('find', findArgs(roots), listing).then((code) => {
      const text = takeFile(listing);
      if (code !== 0) return scanRunsLater(roots);
      const { files, dirs } = findRecordsOf(text);
      return scanOf(roots, files, dirs);
    });
  }
  return runInto('rg', ripgrepArgs(roots, SCAN_GLOBS), listing).then(() =>
    scanOf(
      roots,
      takeFile(listing)
        .split('\0')
        .filter((path) => path !== ''),
    ),
  );
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
