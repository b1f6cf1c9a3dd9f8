import { closeSync, openSync, readSync } from 'node:fs';
import type { Server, Socket } from 'node:net';

/**
 * Only this user's programs reach mmauth's loopback listeners (attacks B2, N6, N21, N22): on Linux
 * the kernel lists every TCP socket with its owner's uid in /proc/net/tcp and /proc/net/tcp6; the
 * peer of a loopback connection is the socket whose local port is our remote port and whose remote
 * port is our local port. Another user's connection is closed before a byte of it is read, so it
 * can neither take the start address, nor deliver a callback, nor hold a descriptor for long.
 */

/** The uid column of the line of `text` whose local port is `clientEnd` and remote port `serverEnd`, if any. */
function uidIn(text: string, clientEnd: string, serverEnd: string): number | undefined {
  for (let at = text.indexOf(clientEnd); at !== -1; at = text.indexOf(clientEnd, at + 1)) {
    const lineStart = text.lastIndexOf('\n', at) + 1;
    const lineEnd = text.indexOf('\n', at);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const [, local, remote, , , , , uid] = text
      .slice(lineStart, lineEnd === -1 ? undefined : lineEnd)
      .trim()
      .split(/\s+/);
    if (local?.endsWith(clientEnd.trimEnd()) === true && remote?.endsWith(serverEnd) === true) {
      const owner = Number(uid);
      if (Number.isInteger(owner)) return owner;
    }
  }
  return undefined;
}

/**
 * The uid that owns the client end of `socket` (a loopback connection), or undefined when the kernel
 * does not say. Reads /proc/net/tcp (then tcp6) in 64 KiB chunks and stops at the match: the kernel
 * writes the table as it is read, one line per socket (about 7 ms for 1,200 sockets whole).
 */
export function peerUid(socket: Pick<Socket, 'localPort' | 'remotePort'>, read = readProcNet): number | undefined {
  const { localPort, remotePort } = socket;
  if (localPort === undefined || remotePort === undefined) return undefined;
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const clientEnd = `:${hex(remotePort)} `;
  const serverEnd = `:${hex(localPort)}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const owner = read(table, (text) => uidIn(text, clientEnd, serverEnd));
    if (owner !== undefined) return owner;
  }
  return undefined;
}

/**
 * Reads a /proc table chunk by chunk, giving `find` the text read so far (whole lines only) until it
 * answers; undefined when the table cannot be read or `find` never answers.
 */
function readProcNet<T>(path: string, find: (text: string) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let carried = '';
    for (;;) {
      const bytes = readSync(fd, chunk, 0, chunk.length, null);
      if (bytes === 0) return carried === '' ? undefined : find(carried);
      const text = carried + chunk.toString('latin1', 0, bytes);
      const lastLine = text.lastIndexOf('\n') + 1;
      const found = find(text.slice(0, lastLine));
      if (found !== undefined) return found;
      carried = text.slice(lastLine);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether the kernel lists sockets here (Linux's /proc/net/tcp can be opened). */
function hasSocketTable(): boolean {
  try {
    closeSync(openSync('/proc/net/tcp', 'r'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `socket`'s peer is this process's user (or root, who can read this user's files anyway).
 * Where the kernel does not list sockets (not Linux), every peer passes: the listeners' other
 * defences (the start address's cookie, state, Host checks) then stand alone.
 */
export function isOwnUserPeer(socket: Pick<Socket, 'localPort' | 'remotePort'>, read = readProcNet): boolean {
  if (typeof process.getuid !== 'function') return true;
  const owner = peerUid(socket, read);
  if (owner === undefined) return !hasSocketTable();
  return owner === process.getuid() || owner === 0;
}

/**
 * Closes every connection to `server` that another user opened (isOwnUserPeer), before it is read,
 * and caps the connections of this user it holds at `maxConnections` (a program of this user cannot
 * take every descriptor either). Another user's connections are counted nowhere: however many they
 * open, none holds a slot this user's programs need (attacks P20, N22). Returns `server`.
 */
export function admitOwnUserOnly<T extends Server>(server: T, maxConnections = 64): T {
  return capConnections(server, maxConnections, isOwnUserPeer);
}

/**
 * Closes, before it is read, every connection to `server` that `isAdmitted` refuses or that would
 * hold more than `maxConnections` at once; only admitted connections count. Returns `server`.
 */
export function capConnections<T extends Server>(
  server: T,
  maxConnections = 64,
  isAdmitted: (socket: Socket) => boolean = () => true,
): T {
  let held = 0;
  server.prependListener('connection', (socket: Socket) => {
    if (held >= maxConnections || !isAdmitted(socket)) {
      socket.destroy();
      return;
    }
    held += 1;
    socket.once('close', () => (held -= 1));
  });
  return server;
}
