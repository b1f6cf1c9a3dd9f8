import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DirIdentity } from './scan-index.js';
import { shellWord } from '../util/shell-word.js';

/**
 * The processes the scan of what runs later (runs-later-changes.ts) runs beside exec: ripgrep's
 * listing of the roots' files and GNU find's of every directory with its identity and every link
 * (a first run in the roots), or find's identities of the directories the last run's index holds
 * (every later run). Off this process's thread, while exec loads the engine.
 */

/** ripgrep's arguments that list every file under `roots` matching `globs`, hidden and ignored ones too, links not followed, NUL-separated. */
export function ripgrepArgs(roots: readonly string[], globs: readonly string[]): string[] {
  const args = ['--files', '--hidden', '--no-ignore', '--no-messages', '--null', '--no-config'];
  for (const glob of globs) args.push('-g', glob);
  return [...args, '--', ...roots];
}

/**
 * Runs ripgrep (`rgArgs`, its output in `listing`) and, beside it, GNU find (`findArgs`, its output
 * in `directories`) from one shell: one process from here (a process costs this one a fork of all
 * its memory; the shell's own are cheap). Resolves with find's exit code, or -1 when none ran.
 */
export function runBoth(
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
export function takeFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * find's records (`d DEVICE INODE CTIME PATH` for a directory, its ctime as seconds with nine or
 * more decimals; `l PATH` for a symbolic link, which ripgrep does not list): the directories'
 * identities as scan-index.ts's dirIdentity gives them, and the links.
 */
export function findRecordsOf(text: string): { dirs: Map<string, DirIdentity>; links: string[] } {
  const dirs = new Map<string, DirIdentity>();
  const links: string[] = [];
  for (const record of text.split('\0')) {
    if (record.startsWith('l ')) {
      links.push(record.slice(2));
      continue;
    }
    const match = /^d (\d+) (\d+) (\d+)\.(\d+) (.+)$/s.exec(record);
    if (match === null) continue;
    const [, device = '', inode = '', seconds = '', fraction = '', path = ''] = match;
    const ns = BigInt(seconds) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
    dirs.set(path, `${device} ${inode} ${ns}`);
  }
  return { dirs, links };
}

/** find's test and output for a directory's record (findRecordsOf reads it). */
const DIR_RECORD = ['-type', 'd', '-printf', 'd %D %i %C@ %p\\0'];

/** GNU find's arguments that list every directory under `roots` with its identity, and every symbolic link. */
export const findArgsFor = (roots: readonly string[]): string[] => [
  '-P',
  ...roots,
  '(',
  ...DIR_RECORD,
  ')',
  '-o',
  '(',
  '-type',
  'l',
  '-printf',
  'l %p\\0',
  ')',
];

/**
 * The identity of each of `dirs` as it is now, from one GNU find in the background (its list of
 * paths in a file in `workDir`, removed once read): a path that is no directory now has none.
 * Resolves undefined where find cannot (not GNU find, or it failed). Never rejects.
 */
export function identitiesNow(dirs: readonly string[], workDir: string): Promise<Map<string, DirIdentity> | undefined> {
  const list = join(workDir, 'index-dirs.list');
  const out = join(workDir, 'index-dirs.found');
  try {
    writeFileSync(list, dirs.map((dir) => `${dir}\0`).join(''), { mode: 0o600 });
  } catch {
    return Promise.resolve(undefined);
  }
  const script = `find -files0-from ${shellWord(list)} -maxdepth 0 ${DIR_RECORD.map(shellWord).join(' ')} > ${shellWord(out)} 2>/dev/null; exit 0`;
  return new Promise((resolve) => {
    const done = (isRun: boolean) => {
      const text = isRun ? takeFile(out) : '';
      rmSync(list, { force: true });
      rmSync(out, { force: true });
      // An empty answer for a tree that exists is a find that cannot (-files0-from is GNU find 4.9's).
      resolve(text === '' && dirs.length > 0 ? undefined : findRecordsOf(text).dirs);
    };
    try {
      const child = spawn('/bin/sh', ['-c', script], { stdio: 'ignore' });
      child.once('error', () => done(false));
      child.once('close', () => done(true));
    } catch {
      done(false);
    }
  });
}
