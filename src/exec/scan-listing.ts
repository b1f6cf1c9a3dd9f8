import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { isTrusted, type DirIdentity } from './scan-index.js';
import { type FindAnswer, identitiesIn, identitiesSince } from './find-records.js';
import { shellWord } from '../util/shell-word.js';

/**
 * The processes the scan of what runs later (runs-later-changes.ts) runs beside exec: ripgrep's
 * listing of the roots' files and GNU find's of every directory with its identity and every link
 * (a first run in the roots), or find's identities of the directories the last run's index holds
 * (every later run), off this process's thread while exec loads the engine; and, from the same
 * shell once the child has exited, find's identities of those directories again for the review.
 */

/** ripgrep's arguments that list every file under `roots` matching `globs`, hidden and ignored ones too, links not followed, NUL-separated. */
export function ripgrepArgs(roots: readonly string[], globs: readonly string[]): string[] {
  const args = ['--files', '--hidden', '--no-ignore', '--no-messages', '--null', '--no-config'];
  for (const glob of globs) args.push('-g', glob);
  return [...args, '--', ...roots];
}

/**
 * A shell beside exec that runs the scan's listing now, then becomes a GNU find that waits on its
 * stdin for directories to restat (restat, once the child has exited): the review after the child
 * then reads no directory's stat data on this process's thread, and no process is forked from this
 * one then (a fork copies its page tables: about 6 ms at 80 MiB, once the engine is loaded). When
 * this process ends without asking, the pipe closes and find, given nothing, ends.
 */
export interface ListingShell {
  /** The listing's status once it ended (runBoth: find's exit code); -1 when the shell could not run or ended first. */
  listed: Promise<number>;
  /**
   * find's answer about `dirs` as they are now, from GNU find in the waiting shell: the identity of
   * each (a path that is no directory now has none), read against `since` where given (an earlier
   * answer about the same list: identitiesSince). Resolves undefined where find cannot (not GNU
   * find, it failed, the shell is gone, or restat was asked before). Never rejects.
   */
  restat(dirs: readonly string[], since?: FindAnswer): Promise<FindAnswer | undefined>;
  /** Lets the shell go without a restat; idempotent. */
  end(): void;
}

/**
 * Starts `listing` (a sh command list; its last command's status is `listed`'s) in a shell that
 * then waits to restat directories (ListingShell). The directories go to find on its stdin and its
 * answer comes on stdout: no file in the child's temp dir, which the child could have replaced with
 * a link, is written once it ran. Never throws.
 */
export function startListingShell(listing: string): ListingShell {
  // After the status line, find waits for the directories (NUL-separated) on stdin, already
  // started: the review waits for no exec. EOF without any lets it go.
  const restat = `exec find -files0-from - -maxdepth 0 ${DIR_RECORD.map(shellWord).join(' ')} 2>/dev/null`;
  const script = `${listing}\necho "$?"\n${restat}\n`;
  let onListed: (code: number) => void = () => undefined;
  let onClosed: () => void = () => undefined;
  const listed = new Promise<number>((resolve) => (onListed = resolve));
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  let shell: ChildProcess | undefined;
  try {
    shell = spawn('/bin/sh', ['-c', script], { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    onListed(-1);
    onClosed();
  }
  let isAsked = false;
  let output = '';
  shell?.stdout?.setEncoding('utf8');
  shell?.stdout?.on('data', (chunk: string) => {
    const hadStatus = output.includes('\n');
    output += chunk;
    const newline = output.indexOf('\n');
    if (hadStatus || newline === -1) return;
    onListed(Number.parseInt(output.slice(0, newline), 10));
    // While it only waits, the shell keeps this process alive no more than its stdin does.
    if (!isAsked && shell !== undefined) idle(shell, true);
  });
  shell?.stdin?.on('error', () => undefined);
  shell?.once('error', () => (onListed(-1), onClosed()));
  shell?.once('close', () => (onListed(-1), onClosed()));
  // find's answer is whole at the end of its output: the shell's exit is seen later (0.5 to 4 ms).
  shell?.stdout?.once('end', onClosed);
  const end = () => {
    isAsked = true;
    shell?.stdin?.end();
  };
  return {
    listed,
    end,
    restat: (dirs, since) => {
      if (isAsked || shell === undefined) return Promise.resolve(undefined);
      isAsked = true;
      idle(shell, false);
      const list = since?.list ?? dirs.map((dir) => `${dir}\0`).join('');
      shell.stdin?.end(list);
      return closed.then(() => {
        const text = output.slice(output.indexOf('\n') + 1);
        const identities = since === undefined ? identitiesIn(text, dirs) : identitiesSince(text, dirs, since);
        return identities === undefined ? undefined : { list, text, identities };
      });
    },
  };
}

/** Whether `shell` alone keeps this process's event loop alive (not while it only waits). */
function idle(shell: ChildProcess, isIdle: boolean): void {
  // A pipe's stream is a net.Socket, which can be unref'ed like the process.
  const stdout = shell.stdout as Socket | null;
  if (isIdle) {
    shell.unref();
    stdout?.unref();
  } else {
    shell.ref();
    stdout?.ref();
  }
}

/**
 * Runs ripgrep (`rgArgs`, its output in `listing`) and, beside it, GNU find (`findArgs`, its output
 * in `directories`) from one shell, which then waits to restat (startListingShell): one process
 * from here. Its `listed` is find's exit code, or -1 when none ran.
 */
export function runBoth(
  rgArgs: readonly string[],
  listing: string,
  findArgs: readonly string[] | undefined,
  directories: string,
): ListingShell {
  const rg = `rg ${rgArgs.map(shellWord).join(' ')} > ${shellWord(listing)}`;
  const both =
    findArgs === undefined
      ? `${rg}; (exit 255)`
      : `find ${findArgs.map(shellWord).join(' ')} > ${shellWord(directories)} & ${rg}; wait $!`;
  const shell = startListingShell(both);
  return { ...shell, listed: shell.listed.then((code) => (code === 255 || Number.isNaN(code) ? -1 : code)) };
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
 * The identity of each of `dirs` as it is now (`identities`), from GNU find in a listing shell
 * (`shell`, which can restat them again later): a path that is no directory now has none. `earlier`:
 * find's answer about the same list when the index was saved (ScanIndex.found, with the index's
 * identities; one never to be trusted is read again), against which only the records that changed
 * are read. `identities` resolves
 * undefined where find cannot (not GNU find, or it failed). Never throws.
 */
export function identitiesNow(
  dirs: readonly string[],
  workDir: string,
  earlier?: Pick<FindAnswer, 'text' | 'identities'>,
): { identities: Promise<Map<string, DirIdentity> | undefined>; shell: ListingShell } {
  const [listFile, out] = [join(workDir, 'index-dirs.list'), join(workDir, 'index-dirs.found')];
  const list = dirs.map((dir) => `${dir}\0`).join('');
  try {
    writeFileSync(listFile, list, { mode: 0o600 });
  } catch {
    // find then answers nothing: identities resolves undefined.
  }
  const shell = startListingShell(
    `find -files0-from ${shellWord(listFile)} -maxdepth 0 ${DIR_RECORD.map(shellWord).join(' ')} > ${shellWord(out)} 2>/dev/null`,
  );
  let first: FindAnswer | undefined;
  const identities = shell.listed.then((code) => {
    const text = code === -1 ? '' : takeFile(out);
    rmSync(listFile, { force: true });
    rmSync(out, { force: true });
    const found = earlier === undefined ? identitiesIn(text, dirs) : identitiesSince(text, dirs, earlier, isTrusted);
    if (found !== undefined) first = { list, text, identities: found };
    return found;
  });
  // A restat of the same directories (the index not reshaped) sends the same list and reads only
  // the records that changed since this answer.
  const isSameDirs = (again: readonly string[]) =>
    again.length === dirs.length && again.every((dir, i) => dir === dirs[i]);
  const restat = (again: readonly string[]) =>
    shell.restat(again, first !== undefined && isSameDirs(again) ? first : undefined);
  return { identities, shell: { ...shell, restat } };
}
