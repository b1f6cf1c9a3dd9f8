import { closeSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Socket } from 'node:net';

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

const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * The key of a connection's client end in the table, from the server's side of it: the client's
 * port (our remote port), then ours (its remote port), as the table writes them. Undefined for a
 * socket already closed (its ports gone).
 */
export function keyOf({ localPort, remotePort }: Pick<Socket, 'localPort' | 'remotePort'>): string | undefined {
  return localPort === undefined || remotePort === undefined ? undefined : `${hex(remotePort)}:${hex(localPort)}`;
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

/**
 * One table's scan for `keys`, its entries added to `found`: the buffer a read fills, and `feed`,
 * given how many bytes the read put there (0 at the table's end), which collects the whole lines
 * read so far and says whether the scan is done (every key found, or the end).
 */
function tableScan(keys: ReadonlySet<string>, found: Map<string, PeerEntry>) {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let carried = '';
  const isDone = () => found.size === keys.size;
  return {
    chunk,
    isDone,
    feed(bytesRead: number): boolean {
      const text = carried + (bytesRead === 0 ? '\n' : chunk.toString('latin1', 0, bytesRead));
      const lastLine = text.lastIndexOf('\n') + 1;
      carried = text.slice(lastLine);
      collectEntries(text.slice(0, lastLine), keys, found);
      return bytesRead === 0 || isDone();
    },
  };
}

/**
 * What the kernel's tables say of each of `keys` (client ends: keyOf), read from /proc/net/tcp
 * then /proc/net/tcp6 in 64 KiB chunks, stopping as soon as every key is found. Rejects when
 * /proc/net/tcp cannot be read.
 */
export async function readPeerEntries(keys: ReadonlySet<string>): Promise<Map<string, PeerEntry>> {
  const found = new Map<string, PeerEntry>();
  const readTable = async (path: string) => {
    const scan = tableScan(keys, found);
    const file = await open(path, 'r');
    try {
      while (!scan.isDone() && !scan.feed((await file.read(scan.chunk, 0, CHUNK_BYTES, null)).bytesRead));
    } finally {
      await file.close();
    }
  };
  await readTable(TABLES[0]);
  // A key still missing (a connection over IPv6, or one already closed): tcp6 too, if it exists.
  if (found.size < keys.size) await readTable(TABLES[1]).catch(() => undefined);
  return found;
}

/**
 * readPeerEntries, synchronously (connections judged at once); a key is missing from the map when
 * the tables do not list it, every key when /proc/net/tcp cannot be read.
 */
export function readPeerEntriesNow(keys: ReadonlySet<string>): Map<string, PeerEntry> {
  const found = new Map<string, PeerEntry>();
  try {
    for (const path of TABLES) {
      if (found.size === keys.size) break;
      const scan = tableScan(keys, found);
      const fd = openSync(path, 'r');
      try {
        while (!scan.isDone() && !scan.feed(readSync(fd, scan.chunk, 0, CHUNK_BYTES, null)));
      } finally {
        closeSync(fd);
      }
    }
  } catch {
    // tcp6 may be missing (no IPv6); tcp was read first.
  }
  return found;
}

/** readPeerEntriesNow for one key: its entry, or undefined. */
export function readPeerEntryNow(key: string): PeerEntry | undefined {
  return readPeerEntriesNow(new Set([key])).get(key);
}

let socketTable: boolean | undefined;
/** Whether the kernel lists sockets here (Linux's /proc/net/tcp can be opened, and uids exist); asked once. */
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
