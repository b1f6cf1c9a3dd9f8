import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError, InterruptedError, NetworkError, UsageError } from '../errors.js';
import { relayContentSecurityPolicy, renderCallbackPage, renderRelayPage, type CallbackPage } from './pages.js';

/** Where the listener binds and which path it serves. */
export interface CallbackServerOptions {
  /** 0 for an ephemeral port (RFC 8252 §7.3). */
  port: number;
  /** Path of the redirect URI, e.g. `/callback`. */
  path: string;
  /**
   * Implicit flow: a GET of the path with no query is answered with the fragment relay page, and
   * a same-origin POST of the path carries the fragment, handed to the handler as `url.hash`.
   */
  isFragmentRelay?: boolean;
}

/**
 * What the caller makes of one callback request: accept it (the value to resolve with and the page
 * to show), or refuse it (`refusal` says why; answered 400, waiting goes on).
 */
export type CallbackOutcome<T> = { value: T; page: CallbackPage } | { refusal: string };

/** Judges one callback request; a throw ends the wait with that error, shown on the page. */
export type CallbackHandler<T> = (url: URL) => Promise<CallbackOutcome<T>>;

/** Options of one wait. */
export interface WaitOptions {
  /** Give up after this many ms (`--wait`). */
  timeoutMs: number;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** Called for a callback that was refused while waiting goes on (wrong state…). */
  onRefused?: (reason: string) => void;
  /**
   * Redirect URLs the user pasted (paste-back, when the browser cannot reach 127.0.0.1). Each is
   * judged like a callback; the first accepted one, from here or from the listener, wins.
   */
  pasted?: AsyncIterable<string>;
}

/** A loopback HTTP listener serving as redirect URI (RFC 8252 §7.3, §8.3). */
export interface CallbackServer {
  /** `http://127.0.0.1:PORT/path`. */
  readonly redirectUri: string;
  readonly port: number;
  /**
   * Serves callbacks (and judges pasted URLs) until `handle` accepts one (resolves with its value)
   * or fails (rejects); refused callbacks are answered 400 and waiting goes on. Rejects with
   * CallbackTimeoutError after `timeoutMs`, InterruptedError on abort. Closes the listener in
   * every case before settling.
   */
  waitForCallback<T>(handle: CallbackHandler<T>, options: WaitOptions): Promise<T>;
  /** Closes the listener and its connections; idempotent. */
  close(): Promise<void>;
}

/** No callback arrived within `--wait`: exit 3 (timeout). */
export class CallbackTimeoutError extends NetworkError {}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
  connection: 'close',
};

/**
 * Starts the listener on 127.0.0.1 only (never 0.0.0.0). Requests other than `GET path` are
 * answered 404/405; a Host header other than `127.0.0.1:PORT` or `localhost:PORT` is refused
 * (DNS rebinding). Throws UsageError naming --redirect-uri when the port is taken.
 */
export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  let onRequest: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (onRequest === undefined) {
      respond(res, 503, { isSuccess: false, title: 'Not waiting', detail: 'mmauth is not waiting for a sign-in right now.' });
      return;
    }
    onRequest(req, res);
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new UsageError(`port ${options.port} on 127.0.0.1 is in use`, { hint: 'pass --redirect-uri with another port, e.g. http://127.0.0.1:8976/callback', cause: error }));
      } else if (error.code === 'EACCES') {
        reject(new UsageError(`not allowed to listen on port ${options.port}`, { hint: 'pass --redirect-uri with a port above 1023', cause: error }));
      } else {
        reject(new CliError(`cannot start the loopback listener: ${error.message}`, 1, { cause: error }));
      }
    });
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const redirectUri = `http://127.0.0.1:${port}${options.path}`;
  const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const allowedOrigins = new Set([...allowedHosts].map((host) => `http://${host}`));
  let isClosed = false;
  const close = async () => {
    if (isClosed) return;
    isClosed = true;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Browsers open spare connections (preconnect) that carry no request and never go idle in
      // Node's sense; the last page has been written by now, so cut whatever is left.
      setTimeout(() => server.closeAllConnections(), 250).unref();
    });
  };

  return {
    redirectUri,
    port,
    close,
    waitForCallback<T>(handle: CallbackHandler<T>, wait: WaitOptions): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        let isSettled = false;
        let isHandling = false;
        const settle = (outcome: () => void) => {
          if (isSettled) return;
          isSettled = true;
          clearTimeout(timer);
          wait.signal.removeEventListener('abort', onAbort);
          onRequest = undefined;
          void close().then(outcome);
        };
        const timer = setTimeout(
          () => settle(() => reject(new CallbackTimeoutError(`no redirect arrived at ${redirectUri} within ${Math.round(wait.timeoutMs / 1000)} s`, {
            hint: 'the authorization server may have shown an error page instead of redirecting (unknown client, redirect URI not registered, bad scope): check the browser; raise --wait SECONDS if you need more time',
          }))),
          wait.timeoutMs,
        );
        const onAbort = () => settle(() => reject(new InterruptedError('interrupted while waiting for the browser')));
        wait.signal.addEventListener('abort', onAbort, { once: true });
        if (wait.signal.aborted) onAbort();

        /** Judges one URL from either source; at most one judgement runs at a time. */
        const judge = async (url: URL): Promise<{ status: number; page: CallbackPage }> => {
          if (isSettled || isHandling) {
            return { status: 409, page: { isSuccess: false, title: 'Already handled', detail: 'A sign-in redirect is already being processed.' } };
          }
          isHandling = true;
          let outcome: CallbackOutcome<T>;
          try {
            outcome = await handle(url);
          } catch (error) {
            settle(() => reject(error));
            return { status: 200, page: { isSuccess: false, title: 'Sign-in failed', detail: error instanceof Error ? error.message : String(error) } };
          }
          if ('refusal' in outcome) {
            isHandling = false;
            wait.onRefused?.(outcome.refusal);
            return { status: 400, page: { isSuccess: false, title: 'Sign-in not accepted', detail: outcome.refusal } };
          }
          const { value } = outcome;
          settle(() => resolve(value));
          return { status: 200, page: outcome.page };
        };

        onRequest = (req, res) => {
          const host = req.headers.host ?? '';
          if (!allowedHosts.has(host.toLowerCase())) {
            respond(res, 400, { isSuccess: false, title: 'Refused', detail: 'Unexpected Host header.' });
            return;
          }
          const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
          if (url.pathname !== options.path) {
            respond(res, 404, { isSuccess: false, title: 'Not found', detail: 'This is the mmauth sign-in listener; nothing lives here.' });
            return;
          }
          if (options.isFragmentRelay === true && req.method === 'POST') {
            void relay(req, res);
            return;
          }
          if (req.method !== 'GET') {
            res.setHeader('allow', options.isFragmentRelay === true ? 'GET, POST' : 'GET');
            respond(res, 405, { isSuccess: false, title: 'Method not allowed', detail: 'Only GET is served here.' });
            return;
          }
          if (options.isFragmentRelay === true && url.search === '') {
            res.writeHead(200, { ...PAGE_HEADERS, 'content-security-policy': relayContentSecurityPolicy() });
            res.end(renderRelayPage());
            return;
          }
          void judge(url).then(({ status, page }) => respond(res, status, page));
        };

        /** The relay page's POST: same origin only, a form-encoded fragment of at most 16 KiB. */
        const relay = async (req: IncomingMessage, res: ServerResponse) => {
          const origin = (req.headers.origin ?? '').toLowerCase();
          if (!allowedOrigins.has(origin)) {
            respondJson(res, 403, { isSuccess: false, title: 'Refused', detail: 'Only the relay page of this listener may post here.' });
            req.resume();
            return;
          }
          const fragment = await readSmallBody(req, 16 * 1024);
          if (fragment === undefined) {
            respondJson(res, 413, { isSuccess: false, title: 'Refused', detail: 'The fragment is too large.' });
            return;
          }
          const { status, page } = await judge(new URL(`${redirectUri}#${fragment}`));
          respondJson(res, status, page);
        };

        void consumePasted(wait.pasted, redirectUri, judge, () => isSettled, wait.onRefused);
      });
    },
  };
}

/** Feeds pasted lines to `judge` until the wait is over; a line that is no URL is reported and skipped. */
async function consumePasted(
  pasted: AsyncIterable<string> | undefined,
  redirectUri: string,
  judge: (url: URL) => Promise<unknown>,
  isOver: () => boolean,
  onRefused: ((reason: string) => void) | undefined,
): Promise<void> {
  if (pasted === undefined) return;
  const expected = new URL(redirectUri);
  for await (const line of pasted) {
    if (isOver()) break;
    const text = line.trim();
    if (text === '') continue;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      onRefused?.('what was pasted is not a URL; paste the full address the browser ended on');
      continue;
    }
    if (url.pathname !== expected.pathname || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      onRefused?.(`the pasted URL is not the redirect URI (expected ${expected.origin}${expected.pathname}?…)`);
      continue;
    }
    await judge(url);
    if (isOver()) break;
  }
}

/** Reads a request body of at most `maxBytes` as UTF-8; undefined when it is longer. */
function readSmallBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(undefined));
  });
}

function respondJson(res: ServerResponse, status: number, page: CallbackPage): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
  res.end(JSON.stringify({ result: page.isSuccess ? 'success' : 'error', title: page.title, detail: page.detail }));
}

function respond(res: ServerResponse, status: number, page: CallbackPage): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(renderCallbackPage(page));
}
