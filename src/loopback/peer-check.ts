import { readFileSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { connectionSlots } from './connection-slots.js';
import {
  hasSocketTable,
  isOwnUserEntry,
  keyOf,
  readPeerEntries,
  readPeerEntriesNow,
  readPeerEntryNow,
} from './socket-table.js';

/**
 * Only this user's programs reach mmauth's loopback listeners (attacks B2, N21, N6, N22, P20): on
 * Linux the kernel lists every TCP socket with its owner's uid and inode in /proc/net/tcp and
 * /proc/net/tcp6; the peer of a loopback connection is the socket whose local port is our remote port
 * and whose remote port is our local port. Another user's connection is closed before a byte of it
 * is read, so it can neither take the start address, nor deliver a callback, nor send a request.
 *
 * A connection is judged at once (a read that stops at its line) while such reads take less than
 * SYNC_SHARE of the event loop's time; beyond that it waits, unread (the server pauses on connect),
 * for the next asynchronous read, which judges every connection that arrived before it began.
 * However many connections another user opens, the owner's wait is a read or two of the tables.
 */

/** A connection's ports, as the server sees them. */
export type ConnectionEnds = Pick<Socket, 'localPort' | 'remotePort'>;

/**
 * The most connections that wait unread for a verdict: an eighth of the process's descriptor limit
 * (/proc/self/limits), at least 64 and at most 16,384. When that many wait, all are judged at once
 * (judgeWaitingNow), so a flood holds at most this many of mmauth's descriptors (twice, with an
 * asynchronous batch being judged meanwhile).
 */
export function waitingCap(limits = readLimits()): number {
  const soft = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? NaN);
  return Number.isFinite(soft) ? Math.min(16_384, Math.max(64, Math.floor(soft / 8))) : 16_384;
}

function readLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

let maxWaiting: number | undefined;

/** The connections waiting for the next read, with what each is told. */
const waiting: { key: string | undefined; tell: (admitted: boolean) => void }[] = [];
let reading = false;
/**
 * The time the event loop may spend reading the tables synchronously, in ms: it grows by
 * SYNC_SHARE of the time that passes, up to SYNC_BUDGET_MS, and each synchronous read spends its
 * duration. Sync reads so take at most that share of the loop; the other connections are batched.
 */
let syncBudgetMs = 20;
let syncBudgetAtMs = performance.now();
const SYNC_SHARE = 0.5;
const SYNC_BUDGET_MS = 20;

/** Whether the budget allows a synchronous read now (it is refilled first). */
function maySyncRead(): boolean {
  const now = performance.now();
  syncBudgetMs = Math.min(SYNC_BUDGET_MS, syncBudgetMs + (now - syncBudgetAtMs) * SYNC_SHARE);
  syncBudgetAtMs = now;
  return syncBudgetMs > 0;
}

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

/** Judges every waiting connection at once (readPeerEntriesNow), emptying the queue. */
function judgeWaitingNow(): void {
  const batch = waiting.splice(0);
  const keys = new Set(batch.flatMap(({ key }) => (key === undefined ? [] : [key])));
  const entries = readPeerEntriesNow(keys);
  for (const { key, tell } of batch) tell(isOwnUserEntry(key === undefined ? undefined : entries.get(key)));
}

/**
 * Whether `socket`'s peer is this process's user (isOwnUserEntry), as the next read of the kernel's
 * tables says. Where the kernel does not list sockets (not Linux), every peer passes: the listeners'
 * other defences (the start address's cookie, state, Host checks) then stand alone.
 */
export function isOwnUserPeer(socket: ConnectionEnds): Promise<boolean> {
  if (!hasSocketTable()) return Promise.resolve(true);
  const key = keyOf(socket);
  // Nobody waiting and the budget allows: this connection alone, at once (each round trip through
  // the thread pool costs a wake-up). Else it waits, unread, for the next batch.
  if (!reading && waiting.length === 0 && maySyncRead()) {
    const started = performance.now();
    const entry = key === undefined ? undefined : readPeerEntryNow(key);
    syncBudgetMs -= performance.now() - started;
    return Promise.resolve(isOwnUserEntry(entry));
  }
  const cap = (maxWaiting ??= waitingCap());
  return new Promise((tell) => {
    waiting.push({ key, tell });
    // Full: every waiting connection judged now, by one synchronous read (a read per maxWaiting
    // connections, whatever the flood): descriptors stay bounded and no verdict is lost.
    if (waiting.length >= cap) judgeWaitingNow();
    else if (!reading) void judgeWaiting();
  });
}

/**
 * Closes every connection to `server` that another user opened (isOwnUserPeer), before a byte of it
 * is read, and holds at most `maxConnections` of this user's (connectionSlots: at the limit the
 * one idle longest makes room). The server pauses on connect; its 'connection' listeners
 * (HTTP's own among them) see a connection only once it is admitted. Another user's connections are
 * counted nowhere and cost no read of their own: however many they open, none holds a slot or a
 * turn this user's programs need (attacks P20, N22). Returns `server`.
 */
export function admitOwnUserOnly<T extends Server>(server: T, maxConnections = 64): T {
  if (!hasSocketTable()) return capConnections(server, maxConnections);
  const admit = connectionSlots(server, maxConnections);
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
      if (!admitted || socket.destroyed || !this.listening || !admit(socket)) return void socket.destroy();
      emit.call(this, 'connection', socket);
      socket.resume();
    });
    return true;
  } as T['emit'];
  return server;
}

/**
 * Holds at most `maxConnections` connections to `server` at once (connectionSlots: at the limit the
 * one idle longest is closed for the new one; when every one serves a request, the new one is
 * closed before it is read). For a listener only this user can reach (a Unix socket in a private
 * directory). Returns `server`.
 */
export function capConnections<T extends Server>(server: T, maxConnections = 64): T {
  const admit = connectionSlots(server, maxConnections);
  server.prependListener('connection', (socket: Socket) => {
    if (!admit(socket)) socket.destroy();
  });
  return server;
}
