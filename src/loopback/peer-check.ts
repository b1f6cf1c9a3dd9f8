import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Server, Socket } from 'node:net';

/**
 * Only this user's programs reach mmauth's loopback listeners (attacks B2, N21, N6, N22, P20): on
 * Linux the kernel lists every TCP socket with its owner's uid and inode in /proc/net/tcp and
 * /proc/net/tcp6; the peer of a loopback connection is the socket whose local port is our remote port
 * and whose remote port is our local port. Another user's connection is closed before a byte of it
 * is read, so it can neither take the start address, nor deliver a callback, nor send a request.
 *
 * The judging is asynchronous and batched: a connection waits, unread (the server pauses on
 * connect), for the next read of the tables, and one read judges every connection that arrived
 * before it began. However many connections another user opens, the owner's wait for a verdict is at
 * most two reads of the tables, and the event loop is free meanwhile.
 */

/** What the table says of the client end of a connection. */
export interface PeerEntry {
  uid: number;
  /** 0 for an entry no process holds: a time-wait or orphaned socket, whose uid column is always 0. */
  inode: number;
}

/** A connection's ports, as the server sees them. */
export type ConnectionEnds = Pick<Socket, 'localPort' | 'remotePort'>;

/** More connections than this waiting for one verdict are refused at once (each holds a descriptor). */
const MAX_WAITING = 16_384;

const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/** The key of a client end in the table: its local port, then its remote port (our local port). */
function keyOf({ localPort, remotePort }: ConnectionEnds): string | undefined {
  return localPort === undefined || remotePort === undefined ? undefined : `${hex(remotePort)}:${hex(localPort)}`;
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

/**
 * Whether `entry` is a socket of this process's user (or of root, who can read this user's files
 * anyway) that a process still holds. A client that sent its request and closed before the verdict
 * leaves an entry with uid 0 and inode 0, whoever it was: refused.
 */
export function isOwnUserEntry(entry: PeerEntry | undefined): boolean {
  if (entry === undefined || entry.inode === 0) return false;
  return entry.uid === process.getuid?.() || entry.uid === 0;
}

/** Reads `path` in 64 KiB chunks, giving `collect` whole lines, until `isDone()` or the end. */
async function readTable(path: string, collect: (text: string) => void, isDone: () => boolean): Promise<void> {
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let carried = '';
    while (!isDone()) {
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return collect(carried);
      const text = carried + chunk.toString('latin1', 0, bytesRead);
      const lastLine = text.lastIndexOf('\n') + 1;
      collect(text.slice(0, lastLine));
      carried = text.slice(lastLine);
    }
  } finally {
    await file.close();
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
  await readTable('/proc/net/tcp', collect, isDone);
  await readTable('/proc/net/tcp6', collect, isDone).catch(() => undefined);
  return found;
}

/** Whether the kernel lists sockets here (Linux's /proc/net/tcp can be opened); asked once. */
let socketTable: boolean | undefined;
function hasSocketTable(): boolean {
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

/** The connections waiting for the next read, with what each is told. */
const waiting: { key: string | undefined; tell: (admitted: boolean) => void }[] = [];
let reading = false;

/** Reads the tables while connections wait; each read judges every connection queued before it. */
async function judgeWaiting(): Promise<void> {
  reading = true;
  while (waiting.length > 0) {
    const batch = waiting.splice(0);
    const keys = new Set(batch.flatMap(({ key }) => (key === undefined ? [] : [key])));
    const entries = await readPeerEntries(keys).catch(() => undefined);
    for (const { key, tell } of batch) {
      tell(entries === undefined ? false : isOwnUserEntry(key === undefined ? undefined : entries.get(key)));
    }
  }
  reading = false;
}

/**
 * Whether `socket`'s peer is this process's user (isOwnUserEntry), as the next read of the kernel's
 * tables says. Where the kernel does not list sockets (not Linux), every peer passes: the listeners'
 * other defences (the start address's cookie, state, Host checks) then stand alone.
 */
export function isOwnUserPeer(socket: ConnectionEnds): Promise<boolean> {
  if (!hasSocketTable()) return Promise.resolve(true);
  if (waiting.length >= MAX_WAITING) return Promise.resolve(false);
  return new Promise((tell) => {
    waiting.push({ key: keyOf(socket), tell });
    if (!reading) void judgeWaiting();
  });
}

/**
 * Closes every connection to `server` that another user opened (isOwnUserPeer), before a byte of it
 * is read, and caps this user's connections it holds at `maxConnections` (a program of this user
 * cannot take every descriptor either). The server pauses on connect; its 'connection' listeners
 * (HTTP's own among them) see a connection only once it is admitted. Another user's connections are
 * counted nowhere and cost no read of their own: however many they open, none holds a slot or a
 * turn this user's programs need (attacks P20, N22). Returns `server`.
 */
export function admitOwnUserOnly<T extends Server>(server: T, maxConnections = 64): T {
  if (!hasSocketTable()) return capConnections(server, maxConnections);
  let held = 0;
  (server as { pauseOnConnect?: boolean }).pauseOnConnect = true;
  const emit = server.emit as (this: T, event: string | symbol, ...args: unknown[]) => boolean;
  server.emit = function (this: T, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'connection') return emit.call(this, event, ...args);
    const socket = args[0] as Socket;
    // Unread, a waiting socket reports nothing; this only keeps a stray error from being thrown.
    const ignore = () => undefined;
    socket.on('error', ignore);
    void isOwnUserPeer(socket).then((admitted) => {
      socket.off('error', ignore);
      if (!admitted || socket.destroyed || !this.listening || held >= maxConnections) return void socket.destroy();
      held += 1;
      socket.once('close', () => (held -= 1));
      emit.call(this, 'connection', socket);
      socket.resume();
    });
    return true;
  } as T['emit'];
  return server;
}

/**
 * Closes, before it is read, every connection to `server` that would hold more than
 * `maxConnections` at once. For a listener only this user can reach (a Unix socket in a private
 * directory). Returns `server`.
 */
export function capConnections<T extends Server>(server: T, maxConnections = 64): T {
  let held = 0;
  server.prependListener('connection', (socket: Socket) => {
    if (held >= maxConnections) {
      socket.destroy();
      return;
    }
    held += 1;
    socket.once('close', () => (held -= 1));
  });
  return server;
}
