import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, rmSync, type Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { readRegularFile } from '../util/read-regular-file.js';
import { replacePrivateFile } from '../util/private-file.js';

/**
 * The index of the scan of what runs later (runs-later.ts) for one set of writable roots: every
 * directory under them with its identity, and what the scan listed in each. exec keeps it in this
 * user's runtime root (which no sandboxed child sees) after each run; the next run in the same
 * roots reads again only the directories whose identity changed, instead of listing every file.
 * The model is git's untracked cache (git-update-index(1), "untracked cache"): a directory whose
 * stat data is unchanged has the same entries. Here the stat data is the device, the inode and the
 * ctime, which no process can set back (a created, removed or renamed entry changes it); a file
 * changed in place keeps its directory's, which is why the scan looks at every listed file again.
 * A directory changed within RACY_MS of being read is never trusted later (git's "racy git" rule:
 * a change in the same clock tick would leave its ctime as it was).
 */

/** A directory's identity (device, inode, ctime in ns; RACY in place of the ctime: one never to be trusted again). */
export type DirIdentity = string;

/** What the scan knows of a set of roots. */
export interface ScanIndex {
  /** Every directory under the roots (the roots too) and its identity. */
  dirs: Map<string, DirIdentity>;
  /** What the scan listed (runs-later.ts's isListed) in each directory, by directory: full paths. */
  listed: Map<string, string[]>;
  /** refreshIndex's: how many directories it read again. */
  reread?: number;
  /** refreshIndex's: whether a directory came or went, or what was listed in one changed (else only identities did). */
  isReshaped?: boolean;
  /**
   * GNU find's answer about the saved index's directories (in their order, every one a directory)
   * when it was saved: its records say each one's identity as the saved `dirs` do, but for those
   * never to be trusted. The next run's find answers the same where nothing changed, and only
   * records that differ are read. refreshIndex keeps it, though the identities it read again differ.
   */
  found?: string;
}

/** In place of a ctime: an identity that matches none. */
const RACY = 'racy';

/** A directory changed this recently (ms before it was read, by this machine's clock) is read again next time. */
const RACY_MS = 2_000;

/** The largest index read, in bytes (about a million directories): beyond, the scan lists every file. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** The format, and with it what the scan lists: a new mmauth whose scan lists more starts afresh. */
const FORMAT = 1;

/** A directory's identity (device, inode and ctime in ns, not followed), or undefined when no directory is there. */
export function dirIdentity(path: string): DirIdentity | undefined {
  try {
    const stats = lstatSync(path, { bigint: true });
    return stats.isDirectory() ? `${stats.dev} ${stats.ino} ${stats.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an identity may be trusted: not one saved as never to be (changed within RACY_MS of being read). */
export const isTrusted = (identity: DirIdentity): boolean => !identity.endsWith(` ${RACY}`);

/** The inode part of an identity (a directory renamed keeps it; one made anew has another). */
export const inodeOf = (identity: DirIdentity | undefined): string | undefined => identity?.split(' ')[1];

/**
 * The index file for `roots` (real paths) in `runtimeRoot`, this user's runtime root:
 * `scan-index/<sha256 of the roots and `listedBy`>.json`. `listedBy` names what the scan lists (its globs).
 */
export function indexFileFor(runtimeRoot: string, roots: readonly string[], listedBy: string): string {
  const key = createHash('sha256')
    .update(JSON.stringify([FORMAT, roots, listedBy]))
    .digest('hex')
    .slice(0, 32);
  return join(runtimeRoot, 'scan-index', `${key}.json`);
}

/** The index in `file` for `roots`, or undefined when there is none, it is unreadable or of other roots. Never throws. */
export function loadIndex(file: string, roots: readonly string[]): ScanIndex | undefined {
  try {
    const saved = JSON.parse(readRegularFile(file, MAX_INDEX_BYTES)) as {
      format?: unknown;
      roots?: unknown;
      dirs?: unknown;
      listed?: unknown;
      found?: unknown;
    };
    if (saved.format !== FORMAT || JSON.stringify(saved.roots) !== JSON.stringify(roots)) return undefined;
    if (!Array.isArray(saved.dirs) || !Array.isArray(saved.listed)) return undefined;
    return {
      dirs: new Map(saved.dirs as Array<[string, string]>),
      listed: new Map(saved.listed as Array<[string, string[]]>),
      ...(typeof saved.found === 'string' ? { found: saved.found } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Saves `index` for `roots` in `file` (0600, whole or not at all; its directory made 0700), each
 * directory whose ctime lies within RACY_MS of `readAtMs` (when it was read, epoch ms) or after it
 * saved as never to be trusted. `found`: GNU find's answer about the index's directories, in their
 * order, that gave their identities (ScanIndex.found). Never throws: without an index the next run
 * lists every file.
 */
export function saveIndex(
  file: string,
  roots: readonly string[],
  index: ScanIndex,
  readAtMs: number,
  found?: string,
): void {
  const trustedBefore = BigInt(Math.floor(readAtMs - RACY_MS)) * 1_000_000n;
  const dirs = [...index.dirs].map(([dir, identity]): [string, string] => {
    const [device = '', inode = '', ctime = ''] = identity.split(' ');
    return [dir, /^\d+$/.test(ctime) && BigInt(ctime) < trustedBefore ? identity : `${device} ${inode} ${RACY}`];
  });
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const text = JSON.stringify({
      format: FORMAT,
      roots,
      dirs,
      listed: [...index.listed],
      ...(found === undefined ? {} : { found }),
    });
    replacePrivateFile(file, text);
    keepNewest(dirname(file), KEPT_INDEXES);
  } catch {
    // Only the next run's speed depends on it.
  }
}

/** How many indexes (sets of roots) are kept: the ones used longest ago go first. */
const KEPT_INDEXES = 100;

/** Removes all but the `kept` most recently written files in `dir`. Throws what readdir throws. */
function keepNewest(dir: string, kept: number): void {
  const names = readdirSync(dir);
  if (names.length <= kept) return;
  const byAge = names
    .map((name) => ({
      path: join(dir, name),
      mtimeMs: lstatSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0,
    }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { path } of byAge.slice(kept)) rmSync(path, { force: true });
}

/**
 * `index` brought up to date: each directory whose identity changed is read again (what
 * `isListed` keeps of its entries replaces what was listed there), a directory new there is read
 * whole, and one gone is dropped with what was listed in it. `identities`: the index's
 * directories' identities as they are now, when known already (else each is lstat'ed here).
 * Returns undefined when more than `budget` entries would be read (a new node_modules: listing
 * every file is then cheaper). Reads only the directories; never throws.
 */
export function refreshIndex(
  index: ScanIndex,
  isListed: (path: string) => boolean,
  budget = Number.POSITIVE_INFINITY,
  identities?: ReadonlyMap<string, DirIdentity>,
): ScanIndex | undefined {
  const dirs = new Map<string, DirIdentity>();
  const listed = new Map<string, string[]>();
  let read = 0;
  let reread = 0;
  let isReshaped = false;
  // Reads `dir` (identity `identity`): its listed entries, and each subdirectory `isNew` says is new here, whole.
  const readDir = (dir: string, identity: DirIdentity, isNew: (path: string) => boolean): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      isReshaped = true;
      return true;
    }
    read += entries.length;
    reread += 1;
    if (read > budget) return false;
    dirs.set(dir, identity);
    const kept: string[] = [];
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (!entry.isDirectory()) {
        if (isListed(path)) kept.push(path);
        continue;
      }
      if (!isNew(path)) continue;
      const sub = dirIdentity(path);
      isReshaped = true;
      if (sub !== undefined && !readDir(path, sub, () => true)) return false;
    }
    if (kept.length > 0) listed.set(dir, kept);
    isReshaped ||= !isSameList(kept, index.listed.get(dir) ?? []);
    return true;
  };
  let isOverBudget = false;
  // forEach, not for-of: this runs once per exec on every directory, before V8 optimises it, and
  // for-of's entries cost about 100 KiB of young objects for 500 directories (a scavenge sooner).
  index.dirs.forEach((before, dir) => {
    if (isOverBudget) return;
    const now = identities === undefined ? dirIdentity(dir) : identities.get(dir);
    if (now === undefined) {
      isReshaped = true;
    } else if (now === before) {
      dirs.set(dir, now);
      const kept = index.listed.get(dir);
      if (kept !== undefined) listed.set(dir, kept);
    } else {
      const isNew = (path: string) => inodeOf(index.dirs.get(path)) !== inodeOf(dirIdentity(path));
      isOverBudget = !readDir(dir, now, isNew);
    }
  });
  if (isOverBudget) return undefined;
  return { dirs, listed, reread, isReshaped, ...(index.found === undefined ? {} : { found: index.found }) };
}

/** Whether `a` and `b` hold the same paths (in any order: readdir's may change). */
function isSameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const inB = new Set(b);
  return a.every((path) => inB.has(path));
}

/** An index from a listing (`files`, full paths) and every directory's identity (`dirs`). */
export function indexOf(files: readonly string[], dirs: Map<string, DirIdentity>): ScanIndex {
  const listed = new Map<string, string[]>();
  for (const file of files) {
    const dir = dirname(file);
    const kept = listed.get(dir);
    if (kept === undefined) listed.set(dir, [file]);
    else kept.push(file);
  }
  return { dirs, listed };
}
