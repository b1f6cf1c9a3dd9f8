import { closeSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * The kernel's socket tables (/proc/net/tcp, /proc/net/tcp6 on Linux), read for the peer check: each
 * line a socket, with its owner's uid and its inode. A connection's client end is found by its key:
 * its local port, then its remote port, in the table's hexadecimal.
 */

/** What the table says of the client end of a connection. */
export interface PeerEntry {
  uid: number;
  /** 0 for an entry no process holds: a time-wait or orphaned socket, whose uid column is always 0. */
  inode: number;
}

// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
const LINE = /^ *\d+: [0-9A-F]+:([0-9A-F]{4}) [0-9A-F]+:([0-9A-F]{4}) \S+ \S+ \S+ \S+ +(\d+) +\d+ (\d+)/gm;

/**
 * Adds to `found` the entries of `text` (whole lines of a /proc/net/tcp table) whose key is in
 * `wanted`. Two entries under one key (the same ports at other addresses) keep the one that admits
 * least: an entry no process holds, else the other user's.
 */
export function collectEntries(text: string, wanted: ReadonlySet<string>, found: Map<string, PeerEntry>): void {
  for (const match of text.matchAll(LINE)) {
    const key = `${match[1]}:${match[2]}`;
    if (!wanted.has(key)) continue;
    const entry = { uid: Number(match[3]), inode: Number(match[4]) };
    const earlier = found.get(key);
    if (earlier === undefined || !isOwnUserEntry(entry)) found.set(key, entry);
  }
}

const CHUNK_BYTES = 64 * 1024;
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'] as const;

/**
 * Whether `entry` is a socket of this process's user (or of root, who can read this user's files
 * anyway) that a process still holds. A client that sent its request and closed before the verdict
 * leaves an entry with uid 0 and inode 0, whoever it was: refused.
 */
export function isOwnUserEntry(entry: PeerEntry | undefined): boolean {
  if (entry === undefined || entry.inode === 0) return false;
  return entry.uid === process.getuid?.() || entry.uid === 0;
}

/** Cuts a table's chunks into whole lines: each chunk's complete lines, the rest kept for the next; `undefined` (the end) gives the rest. */
function lineCutter(): (chunk: Buffer | undefined) => string {
  let carried = '';
  return (chunk) => {
    const text = carried + (chunk?.toString('latin1') ?? '\n');
    const lastLine = text.lastIndexOf('\n') + 1;
    carried = text.slice(lastLine);
    return text.slice(0, lastLine);
  };
}

/** Reads `path` in chunks, giving `collect` whole lines, until `isDone()` or the end. */
async function readTable(path: string, collect: (text: string) => void, isDone: () => boolean): Promise<void> {
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    const lines = lineCutter();
    while (!isDone()) {
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      collect(lines(bytesRead === 0 ? undefined : chunk.subarray(0, bytesRead)));
      if (bytesRead === 0) return;
    }
  } finally {
    await file.close();
  }
}

/** readTable, synchronously: a connection judged at once (the peer check's budget allows it). */
function readTableNow(path: string, collect: (text: string) => void, isDone: () => boolean): void {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    const lines = lineCutter();
    while (!isDone()) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      collect(lines(bytesRead === 0 ? undefined : chunk.subarray(0, bytesRead)));
      if (bytesRead === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * What the kernel's tables say of each of `keys` (client ends), read from /proc/net/tcp then
 * /proc/net/tcp6, stopping as soon as every key is found. Rejects when /proc/net/tcp cannot be read.
 */
export async function readPeerEntries(keys: ReadonlySet<string>): Promise<Map<string, PeerEntry>> {
  const found = new Map<string, PeerEntry>();
  const isDone = () => found.size === keys.size;
  const collect = (text: string) => collectEntries(text, keys, found);
  await readTable(TABLES[0], collect, isDone);
  await readTable(TABLES[1], collect, isDone).catch(() => undefined);
  return found;
}

/** readPeerEntries for one key, synchronously (readTableNow); undefined when /proc/net/tcp cannot be read. */
export function readPeerEntryNow(key: string): PeerEntry | undefined {
  const found = new Map<string, PeerEntry>();
  const keys = new Set([key]);
  const isDone = () => found.size === 1;
  try {
    for (const table of TABLES) readTableNow(table, (text) => collectEntries(text, keys, found), isDone);
  } catch {
    // tcp6 may be missing (no IPv6); tcp was read first.
  }
  return found.get(key);
}

/** Whether the kernel lists sockets here (Linux's /proc/net/tcp can be opened); asked once. */
let socketTable: boolean | undefined;
export function hasSocketTable(): boolean {
  if (socketTable === undefined) {
    try {
      closeSync(openSync('/proc/net/tcp', 'r'));
      socketTable = typeof process.getuid === 'function';
    } catch {
      socketTable = false;
    }
  }
  return socketTable;
}
