import { admitOwnUserOnly } from './peer-check.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MmauthError } from '../errors.js';
import { listenOnLoopback } from '../util/listen.js';
import type { IncomingAuthorizationResponse } from './authorization-response.js';
import { readRelayedFragment, respondRelayJson, serveRelayPage } from './fragment-relay.js';
import { renderCallbackPage, type CallbackPage } from './pages.js';
import { createStartAddress, NOT_STARTED_HERE } from './start-address.js';

/** Where the listener binds and which path it serves. */
export interface CallbackServerOptions {
  /** 0 for an ephemeral port (RFC 8252 §7.3). */
  port: number;
  /** Path of the redirect URI, e.g. `/callback`. */
  path: string;
  /** Implicit flow: serve the fragment relay page at the path and take its same-origin POST. */
  isFragmentRelay?: boolean;
  /**
   * A `localhost` redirect URI: listen on [::1] as well as 127.0.0.1 (same port), so that no other
   * local user can take the address a browser tries first (RFC 8252 §8.3). Needs a fixed `port`.
   */
  isLocalhost?: boolean;
}

/** A loopback HTTP listener serving as redirect URI (RFC 8252 §7.3, §8.3). */
export interface CallbackServer {
  /** `http://127.0.0.1:PORT/path`, or `http://localhost:PORT/path` with `isLocalhost`. */
  readonly redirectUri: string;
  readonly port: number;
  /**
   * The next authorization response that reached the path. While one is unanswered, others are
   * answered 409. Rejects with `interrupted` when `signal` aborts.
   */
  next(signal: AbortSignal): Promise<IncomingAuthorizationResponse>;
  /**
   * Arms the one-time start address for a browser mmauth launches (its argv is readable by every
   * local user, so `state` and the PKCE challenge stay out of it): returns
   * `http://HOST:PORT/start/<128 random bits>`, whose first GET redirects to `authorizationUrl` and
   * sets a per-login cookie (HttpOnly, SameSite=Lax, Path = the redirect path). While armed, a
   * callback (or the implicit relay's POST) without that cookie is refused, and a second GET of the
   * start address ends the wait: next() rejects with `login_intercepted`.
   */
  armStart(authorizationUrl: string): string;
  /** Disarms the start address (the browser could not be launched): callbacks need no cookie again. */
  disarmStart(): void;
  /** How many callbacks were refused for want of the login's cookie (a BROWSER that keeps no cookies). */
  readonly refusedWithoutCookie: number;
  /** Closes the listener and, 250 ms later, any connection left open; idempotent. */
  close(): Promise<void>;
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
  connection: 'close',
};

function respondPage(res: ServerResponse, status: number, page: CallbackPage): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(renderCallbackPage(page));
}

const ALREADY_HANDLED: CallbackPage = {
  isSuccess: false,
  title: 'Already handled',
  detail: 'A sign-in redirect is already being processed.',
};

/**
 * Starts the listener on 127.0.0.1 only (and [::1] for `isLocalhost`; never 0.0.0.0). Requests other than `GET path` (and the
 * relay POST) are answered 404/405; a Host header other than `127.0.0.1:PORT` or `localhost:PORT`
 * is refused (DNS rebinding). Throws `port_in_use`, `port_not_allowed` or `listener_failed`.
 */
export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  const queue: IncomingAuthorizationResponse[] = [];
  let waiter: ((response: IncomingAuthorizationResponse) => void) | undefined;
  let isAnswerPending = false;

  /** Hands one response to the command; `answer` writes the HTTP answer once. */
  const deliver = (url: URL, answer: (status: number, page: CallbackPage) => void) => {
    if (isAnswerPending) {
      answer(409, ALREADY_HANDLED);
      return;
    }
    isAnswerPending = true;
    const settle = (status: number, page: CallbackPage) => {
      if (!isAnswerPending) return;
      isAnswerPending = false;
      answer(status, page);
    };
    const response: IncomingAuthorizationResponse = {
      url,
      respond: (page) => settle(200, page),
      refuse: (reason) => settle(400, { isSuccess: false, title: 'Sign-in not accepted', detail: reason }),
    };
    if (waiter === undefined) {
      queue.push(response);
    } else {
      waiter(response);
      waiter = undefined;
    }
  };

  let refusedWithoutCookie = 0;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();
  let redirectUri = '';
  const start = createStartAddress(options.path, (error) => onIntercepted?.(error));
  let onIntercepted: ((error: MmauthError) => void) | undefined;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) {
      respondPage(res, 400, { isSuccess: false, title: 'Refused', detail: 'Unexpected Host header.' });
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', redirectUri);
    } catch {
      respondPage(res, 400, { isSuccess: false, title: 'Refused', detail: 'The request target is not a valid URL.' });
      return;
    }
    if (start.serve(req, res, url, (status, page) => respondPage(res, status, page))) return;
    if (url.pathname !== options.path) {
      respondPage(res, 404, {
        isSuccess: false,
        title: 'Not found',
        detail: 'This is the mmauth sign-in listener; nothing lives here.',
      });
      return;
    }
    const isRelay = options.isFragmentRelay === true;
    const isCallback = (isRelay && req.method === 'POST') || (req.method === 'GET' && !(isRelay && url.search === ''));
    if (isCallback && !start.admits(req)) {
      refusedWithoutCookie += 1;
      respondPage(res, 403, NOT_STARTED_HERE);
      return;
    }
    if (isRelay && req.method === 'POST') {
      void readRelayedFragment(req, res, allowedOrigins).then((fragment) => {
        if (fragment !== undefined)
          deliver(new URL(`${redirectUri}#${fragment}`), (status, page) => respondRelayJson(res, status, page));
      });
      return;
    }
    if (req.method !== 'GET') {
      res.setHeader('allow', isRelay ? 'GET, POST' : 'GET');
      respondPage(res, 405, { isSuccess: false, title: 'Method not allowed', detail: 'Only GET is served here.' });
      return;
    }
    if (isRelay && url.search === '') {
      serveRelayPage(res, PAGE_HEADERS);
      return;
    }
    deliver(url, (status, page) => respondPage(res, status, page));
  };

  // Another user's connection never reaches the start address or the callback (attacks B2, N21, N22).
  const primary = admitOwnUserOnly(createServer(handle));
  const secondary = options.isLocalhost === true ? admitOwnUserOnly(createServer(handle)) : undefined;
  const servers = secondary === undefined ? [primary] : [primary, secondary];
  for (const server of servers) {
    server.requestTimeout = 10_000;
    server.headersTimeout = 10_000;
  }
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            if (!server.listening) return resolve();
            server.close(() => resolve());
            server.closeIdleConnections();
            // Browsers open spare connections (preconnect) that carry no request and never go idle in
            // Node's sense; the last page has been written by now, so cut whatever is left.
            setTimeout(() => server.closeAllConnections(), 250).unref();
          }),
      ),
    ).then(() => undefined));
  try {
    await listenOnLoopback(primary, options.port);
    if (secondary !== undefined) await listenOnLoopback(secondary, options.port, '::1');
  } catch (error) {
    await close();
    throw error;
  }
  const port = (primary.address() as AddressInfo).port;
  redirectUri = `http://${options.isLocalhost === true ? 'localhost' : '127.0.0.1'}:${port}${options.path}`;
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  allowedOrigins = new Set([...allowedHosts].map((host) => `http://${host}`));

  return {
    redirectUri,
    port,
    close,
    armStart: (authorizationUrl) =>
      `${redirectUri.slice(0, redirectUri.length - options.path.length)}${start.arm(authorizationUrl)}`,
    disarmStart: () => start.disarm(),
    get refusedWithoutCookie() {
      return refusedWithoutCookie;
    },
    next(signal) {
      if (start.intercepted !== undefined) return Promise.reject(start.intercepted);
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          waiter = undefined;
          onIntercepted = undefined;
          reject(new MmauthError('interrupted', 'interrupted while waiting for the browser'));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        onIntercepted = (error) => {
          signal.removeEventListener('abort', onAbort);
          waiter = undefined;
          onIntercepted = undefined;
          reject(error);
        };
        waiter = (response) => {
          signal.removeEventListener('abort', onAbort);
          onIntercepted = undefined;
          resolve(response);
        };
      });
    },
  };
}
