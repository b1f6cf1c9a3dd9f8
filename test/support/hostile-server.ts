import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** How the server answers one request (it may also never answer, or drop the connection). */
export type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

/** A request the hostile server received. */
export interface HostileRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A misbehaving OAuth server on 127.0.0.1 port 0, closed (connections cut) when the test ends. */
export interface HostileServer {
  baseUrl: string;
  requests: HostileRequest[];
}

/**
 * Starts a server answering `routes` (`"POST /oauth2/token"` → behaviour); anything else gets 404.
 * With `tls` ({key, cert} PEM) it serves https.
 */
export async function startHostileServer(
  routes: Record<string, Behaviour>,
  tls?: { key: string; cert: string },
): Promise<HostileServer> {
  const requests: HostileRequest[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const behaviour = routes[`${req.method} ${url.pathname}`];
      if (behaviour === undefined) {
        res.writeHead(404, { 'content-type': 'text/html' }).end('');
        return;
      }
      behaviour(req, res);
    });
  };
  const server: Server = tls === undefined ? createHttpServer(handler) : createHttpsServer(tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { baseUrl: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`, requests };
}

/** Answers `status` with `body` as given (a string or bytes) and `contentType`. */
export function answer(
  status: number,
  body: string | Buffer,
  contentType = 'application/json; charset=utf-8',
  headers: Record<string, string> = {},
): Behaviour {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': contentType, ...headers });
    res.end(body);
  };
}

/** Answers 200 JSON `value`. */
export function json(value: unknown, status = 200): Behaviour {
  return answer(status, JSON.stringify(value));
}

/** Never answers: the request hangs until the client gives up. */
export const neverAnswer: Behaviour = () => undefined;

/** Sends the headers and part of the body, then stalls. */
export const stallBody: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"access_token":"abc');
};

/** Drops the connection without an answer (the client sees a reset). */
export const resetConnection: Behaviour = (req) => {
  req.socket.resetAndDestroy();
};

/** A self-signed certificate for 127.0.0.1 made by openssl: PEM key and cert, the cert's file, and how to delete it. */
export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** For NODE_EXTRA_CA_CERTS. */
  certFile: string;
  remove(): void;
}

/** Makes a fresh RSA key and a one-day self-signed certificate for IP 127.0.0.1 (bounded: 20 s). */
export function makeSelfSignedCertificate(): SelfSignedCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore', timeout: 20_000 },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    certFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
