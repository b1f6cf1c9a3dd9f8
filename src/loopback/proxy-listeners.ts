import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { listenOnLoopback } from '../util/listen.js';
import { admitOwnUserOnly, capConnections } from './peer-check.js';

/** How long a connection may stay without a whole request head, and idle between requests, in ms. */
const IDLE_TIMEOUT_MS = 5_000;

/** The listeners an API proxy answers on: TCP on 127.0.0.1, and a Unix socket when asked for one. */
export interface ProxyListeners {
  port: number;
  socketPath: string | undefined;
  close(): Promise<void>;
}

/**
 * Whether `req` came over the Unix socket, which only this user can open (its directory is 0700):
 * no Host to check there (curl --unix-socket and Python clients send what they like).
 */
export function isViaUnixSocket(req: IncomingMessage): boolean {
  return req.socket.localPort === undefined;
}

/**
 * An HTTP server whose idle connections close in seconds (attacks P19): one that sends nothing (which
 * Node's headersTimeout never ends) after IDLE_TIMEOUT_MS, a request head that takes longer
 * (checked every second, not Node's 30), a kept connection idle that long between requests.
 */
function server(handler: RequestListener): Server {
  const created = createServer({ connectionsCheckingInterval: 1_000 }, handler);
  created.headersTimeout = IDLE_TIMEOUT_MS;
  created.keepAliveTimeout = IDLE_TIMEOUT_MS;
  const silent = new WeakMap<Socket, NodeJS.Timeout>();
  created.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), IDLE_TIMEOUT_MS);
    silent.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  created.on('request', (req: IncomingMessage) => clearTimeout(silent.get(req.socket)));
  // Node hands CONNECT to a listener of its own (and else drops the connection unanswered): 405.
  created.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  return created;
}

/**
 * Serves `handler` on 127.0.0.1:`port` (0: a free one; another user's connections closed unread,
 * this user's capped: admitOwnUserOnly) and, with `socketPath` (in a private 0700 directory the
 * caller made), on that Unix socket too: a socket no other user can reach, nor hold
 * a slot of. Connections idle for IDLE_TIMEOUT_MS are closed. Throws what listenOnLoopback throws
 * (`port_in_use`, …) or the socket's listen error.
 */
export async function listenForProxy(
  handler: RequestListener,
  port: number,
  socketPath?: string,
): Promise<ProxyListeners> {
  const tcp = admitOwnUserOnly(server(handler));
  await listenOnLoopback(tcp, port);
  // The socket's directory admits this user alone: no peer to check there, only the cap.
  const unix = socketPath === undefined ? undefined : capConnections(server(handler));
  if (unix !== undefined) {
    await new Promise<void>((resolve, reject) => {
      unix.once('error', reject);
      unix.listen(socketPath, () => resolve());
    }).catch(async (error: unknown) => {
      tcp.close();
      throw error;
    });
  }
  const closeOne = (one: Server) =>
    new Promise<void>((resolve) => {
      one.close(() => resolve());
      one.closeAllConnections();
    });
  return {
    port: (tcp.address() as AddressInfo).port,
    socketPath,
    close: async () => {
      await Promise.all([closeOne(tcp), ...(unix === undefined ? [] : [closeOne(unix)])]);
    },
  };
}
