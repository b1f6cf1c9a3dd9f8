import type { DirIdentity } from './scan-index.js';

/**
 * GNU find's answers about directories, read: its records of each directory's identity (as
 * scan-index.ts's dirIdentity gives it) and of each symbolic link, and an answer read against an
 * earlier one about the same directories (only the records that changed).
 */

/**
 * find's records (`d DEVICE INODE CTIME PATH` for a directory, its ctime as seconds with nine or
 * more decimals; `l PATH` for a symbolic link, which ripgrep does not list): the directories'
 * identities as scan-index.ts's dirIdentity gives them, and the links.
 */
export function findRecordsOf(text: string): { dirs: Map<string, DirIdentity>; links: string[] } {
  const dirs = new Map<string, DirIdentity>();
  const links: string[] = [];
  // A record at a time, its fields by one pattern (native code, fast before V8 has optimised this
  // function, which runs once per exec on every directory): about 2 ms for 512, against 6 to 10 by
  // indexOf and a check per field.
  for (const record of text.split('\0')) {
    if (record.startsWith('l ')) {
      links.push(record.slice(2));
      continue;
    }
    const fields = DIR_FIELDS.exec(record);
    if (fields === null || record.length === fields[0].length) continue;
    // seconds × 10⁹ + nanoseconds, as decimal digits: the first nine of the fraction after the seconds.
    const fraction = fields[4] ?? '';
    const ns = `${fields[3] ?? ''}${fraction.length >= 9 ? fraction.slice(0, 9) : fraction + '000000000'.slice(fraction.length)}`;
    dirs.set(record.slice(fields[0].length), `${fields[1] ?? ''} ${fields[2] ?? ''} ${trimZeros(ns)}`);
  }
  return { dirs, links };
}

/** A directory's record up to its path: `d DEVICE INODE SECONDS.FRACTION `. */
const DIR_FIELDS = /^d (\d+) (\d+) (\d+)\.(\d+) /;

/** Decimal digits without leading zeros ('0' stays), as BigInt would print them. */
const trimZeros = (digits: string): string => {
  let at = 0;
  while (at < digits.length - 1 && digits.charCodeAt(at) === 48) at += 1;
  return digits.slice(at);
};

/** find's answer about directories: the list it was given (NUL-separated), its text, and that read. */
export interface FindAnswer {
  list: string;
  text: string;
  identities: ReadonlyMap<string, DirIdentity>;
}

/**
 * identitiesIn, reading only the records that differ from `since`'s: an earlier answer about the
 * same directories (`since.list` need not be given again), in the same order, whose `identities`
 * are what its records say but where `isTrusted` says no (scan-index.ts's RACY). A record equal in
 * its place is the same directory's, unchanged: its identity is `since`'s, if trusted, else read.
 * Every directory answered then and now means the same directories are there, in `dirs`' order
 * (find answers its list in order); else every record is read.
 */
export function identitiesSince(
  text: string,
  dirs: readonly string[],
  since: Pick<FindAnswer, 'text' | 'identities'>,
  isTrusted: (identity: DirIdentity) => boolean = () => true,
): Map<string, DirIdentity> | undefined {
  const [now, before] = [text.split('\0'), since.text.split('\0')];
  // A NUL after each record: one more part than records. Each directory gives one record at most.
  if (now.length !== before.length || before.length !== dirs.length + 1) return identitiesIn(text, dirs);
  const identities = new Map<string, DirIdentity>();
  const read: string[] = [];
  dirs.forEach((dir, i) => {
    const record = now[i] ?? '';
    // Equal to the earlier record in its place, and that place's directory's (its path ends it).
    const isSame = record === before[i] && isRecordOf(record, dir);
    const kept = isSame ? since.identities.get(dir) : undefined;
    if (kept !== undefined && isTrusted(kept)) identities.set(dir, kept);
    else read.push(record);
  });
  for (const [dir, identity] of findRecordsOf(read.join('\0')).dirs) identities.set(dir, identity);
  return identities;
}

/** Whether find's directory record `record` is `dir`'s: its path, after a space, ends it. */
const isRecordOf = (record: string, dir: string): boolean =>
  record.length > dir.length && record.endsWith(dir) && record.charCodeAt(record.length - dir.length - 1) === 32;

/** find's answer `text` about `dirs`, read (findRecordsOf); undefined when empty for dirs (no GNU find 4.9: -files0-from). */
export const identitiesIn = (text: string, dirs: readonly string[]): Map<string, DirIdentity> | undefined =>
  text === '' && dirs.length > 0 ? undefined : findRecordsOf(text).dirs;
