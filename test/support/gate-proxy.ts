import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/**
 * What the gate does with a request it matches: pass it on, cut the connection, hold it unanswered,
 * or echo it (200 with the request's head as received, as a server that honours TRACE does: RFC
 * 9110 §9.3.8; Apache's TraceEnable is on by default). `delayMs` forwards the request late (the
 * server never sees it if the client leaves first); `answerDelayMs` forwards it at once and holds
 * the server's answer back (the server has acted — minted a token — whether or not the client waits).
 */
export type GateMode = 'pass' | 'cut' | 'hold' | 'echo' | { delayMs: number } | { answerDelayMs: number };

/**
 * A reverse proxy on 127.0.0.1 port 0 in front of a server (the emulator), for tests of what a
 * failing network or a kill leaves behind: requests whose `METHOD path` matches a rule are cut
 * (the connection destroyed before the server sees them) or held (never forwarded, never
 * answered) while the rest pass; the `Location` of a matching answer can be rewritten (a man in
 * the middle). `seen` lists every `METHOD path` that arrived. Closed when the test ends.
 */
export interface GateProxy {
  baseUrl: string;
  seen: string[];
  /** Sets what happens to requests whose `METHOD path` starts with `prefix` (e.g. `GET /oauth2/token/info`). */
  set(prefix: string, mode: GateMode): void;
  /** Rewrites the `Location` of answers to requests whose `METHOD path` starts with `prefix`. */
  rewriteLocation(prefix: string, rewrite: (location: URL) => URL): void;
  /** Resolves when a request starting with `prefix` has arrived (bounded by `timeoutMs`). */
  waitFor(prefix: string, timeoutMs?: number): Promise<void>;
}

/**
 * Starts a gate proxy in front of `targetBaseUrl` (http on loopback); a function gives it when the
 * server starts after the proxy (a server that must know the proxy's address first).
 */
export async function startGateProxy(targetBaseUrl: string | (() => string)): Promise<GateProxy> {
  const targetOf = () => new URL(typeof targetBaseUrl === 'string' ? targetBaseUrl : targetBaseUrl());
  const rules = new Map<string, GateMode>();
  const rewrites = new Map<string, (location: URL) => URL>();
  const seen: string[] = [];
  const waiters = new Set<() => void>();
  const held = new Set<ServerResponse>();
  const modeOf = (line: string): GateMode => {
    for (const [prefix, mode] of rules) if (line.startsWith(prefix)) return mode;
    return 'pass';
  };
  const forward = (req: IncomingMessage, res: ServerResponse, answerDelayMs = 0) => {
    const target = targetOf();
    const line = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        // A reverse proxy names the server it forwards to (the emulator refuses a foreign Host).
        headers: { ...req.headers, host: target.host },
      },
      (answer) =>
        void setTimeout(() => {
          if (res.destroyed) {
            answer.resume();
            return;
          }
          const headers = { ...answer.headers };
          const rewrite = [...rewrites].find(([prefix]) => line.startsWith(prefix))?.[1];
          if (rewrite !== undefined && headers.location !== undefined)
            headers.location = rewrite(new URL(headers.location)).href;
          res.writeHead(answer.statusCode ?? 502, headers);
          answer.pipe(res);
        }, answerDelayMs),
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server = createServer((req, res) => {
    const line = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
    seen.push(line);
    for (const waiter of waiters) waiter();
    const mode = modeOf(line);
    if (mode === 'cut') {
      req.socket.destroy();
      return;
    }
    if (mode === 'hold') {
      held.add(res);
      return;
    }
    if (mode === 'echo') {
      const head = [`${line} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) head.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      res.writeHead(200, { 'content-type': 'message/http' });
      res.end(`${head.join('\r\n')}\r\n\r\n`);
      return;
    }
    if (typeof mode === 'object' && 'answerDelayMs' in mode) {
      forward(req, res, mode.answerDelayMs);
      return;
    }
    if (typeof mode === 'object') {
      // Forwarded after the delay: the server answers late, as a slow network or server would.
      const timer = setTimeout(() => forward(req, res), mode.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    set: (prefix, mode) => void rules.set(prefix, mode),
    rewriteLocation: (prefix, rewrite) => void rewrites.set(prefix, rewrite),
    waitFor: (prefix, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const start = seen.length;
        const check = () => {
          if (seen.slice(start).some((line) => line.startsWith(prefix))) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${prefix} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
      }),
  };
}
