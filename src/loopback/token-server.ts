import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isSameSecret } from '../util/constant-time.js';
import { admitOwnUserOnly } from './peer-check.js';
import { listenOnLoopback } from '../util/listen.js';

/** What the endpoint answers: a fresh token with its lifetime. */
export interface ServedToken {
  accessToken: string;
  /** Seconds left, or null for no expiry. */
  expiresInSeconds: number | null;
  /** ISO 8601, or null. */
  expiresAt: string | null;
}

/** The child's token endpoint. */
export interface TokenServer {
  /** `http://127.0.0.1:PORT/token`. */
  readonly url: string;
  /** The value the child sends as `Authorization: Bearer …` (256 random bits). */
  readonly authorization: string;
  /** The same endpoint on a Unix socket in the private directory (0700): only this user can reach it, and nobody can take it over (attacks N7). */
  readonly socketPath: string | undefined;
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** The most of a `POST /token/refused` body read: it carries one access token. */
const MAX_REFUSED_BODY_BYTES = 16 * 1024;

/** The access token a `POST /token/refused` body names (`{"access_token": TOKEN}`), or undefined. */
async function refusedTokenOf(req: IncomingMessage): Promise<string | undefined> {
  const { readCappedBody } = await import('../util/read-capped-body.js');
  const bytes = await readCappedBody(req, MAX_REFUSED_BODY_BYTES, () => req.destroy());
  try {
    const json = JSON.parse(Buffer.from(bytes ?? []).toString('utf8')) as Record<string, unknown>;
    return typeof json.access_token === 'string' && json.access_token !== '' ? json.access_token : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the token endpoint of an `exec` child on 127.0.0.1 (a random port; aws-vault's local
 * credential server): `GET /token` with `Authorization: Bearer <authorization>` answers
 * `{access_token, token_type, expires_in, expires_at}` from `fresh()` (which renews first when
 * stale, one renewal however many requests wait), `Cache-Control: no-store`; `POST /token/refused`
 * with `{"access_token": TOKEN}` (the service answered 401 to it) answers the same from
 * `refused(TOKEN)`: the token to use now, renewed when TOKEN is still the current one (400 for
 * another body). Without the right authorization 401; a foreign Host 403 (no DNS rebinding);
 * another path 404, another method 405. Nothing is logged. A failing `fresh()` answers 503 with the reason.
 */
export async function startTokenServer(
  fresh: () => Promise<ServedToken>,
  socketPath?: string,
  refused: (accessToken: string) => Promise<ServedToken> = () => fresh(),
): Promise<TokenServer> {
  const authorization = randomBytes(32).toString('base64url');
  let host = '';
  const handle = async (req: IncomingMessage, res: ServerResponse, isSocket: boolean) => {
    // No page on another site reaches a Unix socket: its Host is whatever the client says (curl: localhost).
    if (!isSocket && (req.headers.host ?? '').toLowerCase() !== host)
      return answer(res, 403, { error: 'forbidden_host' });
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/token' && path !== '/token/refused') return answer(res, 404, { error: 'not_found' });
    const method = path === '/token' ? 'GET' : 'POST';
    if (req.method !== method) return answer(res, 405, { error: 'method_not_allowed' }, { allow: method });
    const given = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (given === undefined || !isSameSecret(given, authorization)) {
      return answer(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="mmauth exec"' });
    }
    let served = fresh;
    if (method === 'POST') {
      const token = await refusedTokenOf(req);
      if (token === undefined)
        return answer(res, 400, { error: 'invalid_request', error_description: 'send {"access_token": TOKEN}' });
      served = () => refused(token);
    }
    served().then(
      (token) =>
        answer(res, 200, {
          access_token: token.accessToken,
          token_type: 'Bearer',
          expires_in: token.expiresInSeconds,
          // Whole seconds, as every other document gives an instant (2026-01-02T03:04:05Z).
          expires_at:
            token.expiresAt === null
              ? null
              : new Date(Date.parse(token.expiresAt)).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        }),
      (error: unknown) =>
        answer(res, 503, {
          error: 'unavailable',
          error_description: error instanceof Error ? error.message : String(error),
        }),
    );
  };
  const server = createServer((req, res) => void handle(req, res, false).catch(() => res.destroy()));
  // Only this user's programs get in (attacks N6, N7); short header and request limits, few connections.
  admitOwnUserOnly(server);
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  await listenOnLoopback(server, 0);
  const port = (server.address() as AddressInfo).port;
  host = `127.0.0.1:${port}`;
  const socketServer =
    socketPath === undefined
      ? undefined
      : createServer((req, res) => void handle(req, res, true).catch(() => res.destroy()));
  if (socketServer !== undefined && socketPath !== undefined) {
    socketServer.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      socketServer.once('error', reject);
      socketServer.listen(socketPath, () => resolve());
    });
  }
  const closeOne = (one: typeof server) =>
    new Promise<void>((resolve) => {
      one.close(() => resolve());
      one.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}/token`,
    authorization,
    socketPath,
    close: async () => {
      await Promise.all([closeOne(server), ...(socketServer === undefined ? [] : [closeOne(socketServer)])]);
    },
  };
}
