import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { sendWithToken, type RequestTokens } from '../http/authenticated-request.js';
import { readCappedBody } from '../util/read-capped-body.js';
import { methodOverride } from './method-override.js';
import { isAllowedPath, isAmbiguousPath } from './proxy-path.js';
import { withoutSecret } from './path-secret.js';
import { isViaUnixSocket, listenForProxy } from './proxy-listeners.js';

/** What one forwarded request was, for `--verbose`: never a token. */
export interface ProxiedRequest {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  isRenewed: boolean;
}

/** Options of startApiProxy. */
export interface ApiProxyOptions {
  /** The profile's base URL: the only origin the proxy ever contacts. */
  upstream: URL;
  /** Port on 127.0.0.1; 0 for a free one. */
  port: number;
  /** A Unix socket to serve on as well, in a private (0700) directory the caller made. */
  socketPath?: string | undefined;
  /** Where the proxy gets the token it adds: the current one, a new one after a refusal. */
  tokens: RequestTokens;
  /** Methods a program may use (upper case); undefined: any but CONNECT. */
  allowMethods?: ReadonlySet<string> | undefined;
  /** Path prefixes a program may reach; undefined: any. */
  allowPaths?: readonly string[] | undefined;
  onRequest?: ((request: ProxiedRequest) => void) | undefined;
  /**
   * A per-run secret every request over TCP must begin its path with (`/SECRET/api/…`, stripped
   * before forwarding): a peer of this user's is not enough, since a sandbox
   * engine's proxy connects as the user for whoever holds its credentials. The URL returned holds it.
   */
  pathSecret?: string | undefined;
}

/** The most of a request body buffered so that it can be replayed after a 401 (`api`'s cap). */
const MAX_REPLAYABLE_BYTES = 10 * 1024 * 1024;

/** Methods a server answers with the request as it got it (TRACE: RFC 9110 §9.3.8; IIS's TRACK). */
const ECHOING_METHODS = new Set(['TRACE', 'TRACK']);

/** The body of a request that has none. */
const EMPTY = Buffer.alloc(0);

/** Hop-by-hop header fields (RFC 9110 §7.6.1), never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** `headers` without hop-by-hop fields, those `Connection` names, and `drop`. */
function endToEnd(headers: IncomingMessage['headers'], drop: ReadonlySet<string>): Record<string, string | string[]> {
  // Most requests name no field in `Connection` but `keep-alive` or `close`: no list to build then.
  const connection = headers.connection;
  const named =
    connection === undefined || /^\s*(keep-alive|close)\s*$/i.test(connection)
      ? undefined
      : new Set(connection.split(',').map((name) => name.trim().toLowerCase()));
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || drop.has(name) || named?.has(name) === true) continue;
    out[name] = value;
  }
  return out;
}

/**
 * What the program sends that never goes on: its own credentials, its `Host` (the upstream's is
 * set), and the body's framing (`Content-Length`, `Expect`): the proxy frames what it sends (P8).
 */
const NOT_FORWARDED = new Set(['authorization', 'cookie', 'host', 'content-length', 'expect']);

/**
 * Added to every answer: a page the service serves (an attachment, a rendered note) opened at the
 * proxy's address runs no script with the proxy's authority, since the token is added to its
 * same-origin requests (attacks P24): a sandbox (an opaque origin, no script) and no sniffing.
 * The service's own Content-Security-Policy is kept beside it (CSP 3 §8.1: every policy holds).
 */
const CONFINED_POLICY = 'sandbox';

/** Methods whose body has no meaning (RFC 9110 §9.3.1, §9.3.2) and whose body a server may not read as one (P8). */
const BODILESS_METHODS = new Set(['GET', 'HEAD']);

/**
 * What the service sends that never goes back: cookies it sets. The proxy forwards none (the program
 * could only use one directly, as a credential of its own beside the token it must never hold).
 */
const NOT_RETURNED = new Set(['set-cookie']);

function refuse(res: ServerResponse, status: number, error: string, description: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ error, error_description: description }));
}

/**
 * Starts the authenticating proxy on 127.0.0.1 and, with `socketPath`, on a Unix socket
 * (listenForProxy; `mmauth proxy`, `exec --proxy`; kubectl proxy's pattern): each request to `http://127.0.0.1:PORT/PATH` goes to the profile's base URL + PATH
 * (its origin whatever PATH looks like: attacks P1) with `Authorization: Bearer <current token>`,
 * the answer streamed back as it comes. Refused before any upstream request: another user's
 * connection (peer check), a foreign `Host` (DNS rebinding), any `Origin` or a browser's
 * `Sec-Fetch-Site` naming another site (a web page: no CORS; P7) with 403; `CONNECT`, `TRACE` and `TRACK` with 405 (P6); an absolute-form target, a dot segment or
 * a backslash in the path with 400 (P2); a method or a path outside the allow-lists, or a method
 * override naming a method outside them (P3), with 403. The program's own `Authorization` and
 * `Cookie` and hop-by-hop fields (RFC 9110 §7.6.1) are not forwarded, nor the service's
 * `Set-Cookie` returned; redirects come back unfollowed. A 401 renews once and replays once when the body was buffered (at most 10 MiB; the
 * holder decides whether it renews: P4); a larger or unsized body is streamed and its 401 returned.
 */
export async function startApiProxy(
  options: ApiProxyOptions,
): Promise<{ url: string; socketPath: string | undefined; close(): Promise<void> }> {
  let hosts = new Set<string>();
  const basePath = options.upstream.pathname.replace(/\/+$/, '');
  const isHttps = options.upstream.protocol === 'https:';
  const send = isHttps ? httpsRequest : httpRequest;
  // Connections to the service are kept and reused: a new TCP (and TLS) set-up per request would be most of the cost.
  const agent = isHttps ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  // The origin's request options, worked out once (bracketless IPv6 host, port): only the path changes per request.
  const { protocol, hostname, port: upstreamPort } = urlToHttpOptions(new URL(options.upstream.origin));
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const startedMs = Date.now();
    const method = req.method ?? 'GET';
    const target = withoutSecret(req.url ?? '/', isViaUnixSocket(req) ? undefined : options.pathSecret);
    if (target === undefined) return refuse(res, 404, 'not_found', 'no such path on this proxy');
    if (!isViaUnixSocket(req) && !hosts.has(String(req.headers.host ?? '').toLowerCase())) {
      return refuse(res, 403, 'forbidden_host', 'this proxy answers only to its own address');
    }
    if (req.headers.origin !== undefined) return refuse(res, 403, 'forbidden_origin', 'no web page may use this proxy');
    // A browser's GET for another site's page (an image, a frame, a no-cors fetch) carries no Origin:
    // its Sec-Fetch-Site says whose it is. The user's own address bar (`none`) stays theirs (P7).
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'none' && site !== 'same-origin') {
      return refuse(res, 403, 'forbidden_origin', 'no web page may use this proxy');
    }
    if (method === 'CONNECT') return refuse(res, 405, 'method_not_allowed', 'CONNECT opens no tunnel here');
    // A server that honours them answers with the request itself, the token included (cross-site tracing).
    if (ECHOING_METHODS.has(method.toUpperCase())) {
      return refuse(res, 405, 'method_not_allowed', `${method} would echo the token back`);
    }
    if (!target.startsWith('/')) return refuse(res, 400, 'absolute_target', 'send a path, not an absolute URL');
    if (options.allowMethods !== undefined && !options.allowMethods.has(method)) {
      return refuse(res, 403, 'method_not_allowed', `${method} is not among the methods this proxy allows`);
    }
    const path = target.split('?')[0] ?? '/';
    if (isAmbiguousPath(path)) {
      return refuse(res, 400, 'ambiguous_path', 'send a path without dot segments or backslashes');
    }
    if (!isAllowedPath(path, options.allowPaths)) {
      return refuse(res, 403, 'path_not_allowed', `${path} is under none of the paths this proxy allows`);
    }
    const length = Number(req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? NaN : 0));
    if (length !== 0 && BODILESS_METHODS.has(method.toUpperCase())) {
      return refuse(res, 400, 'body_not_allowed', `a ${method} request carries no body here`);
    }
    // No body (most requests: GET, HEAD, DELETE) is read as none: nothing to wait for.
    const body =
      length === 0
        ? EMPTY
        : Number.isFinite(length) && length <= MAX_REPLAYABLE_BYTES
          ? await readCappedBody(req, MAX_REPLAYABLE_BYTES)
          : undefined;
    const override =
      options.allowMethods === undefined ? undefined : methodOverride(req.headers, body, options.allowMethods);
    if (override !== undefined)
      return refuse(res, 403, 'method_not_allowed', `${override} is not among the methods this proxy allows`);
    // The upstream framing is the proxy's own: the buffered body's length, else chunks it writes (P8).
    const framing: Record<string, string> =
      body === undefined
        ? { 'transfer-encoding': 'chunked' }
        : body.byteLength > 0 || !BODILESS_METHODS.has(method.toUpperCase())
          ? { 'content-length': String(body.byteLength) }
          : {};
    const headers = { ...endToEnd(req.headers, NOT_FORWARDED), ...framing };
    const forward = (accessToken: string) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const upstream = send(
          {
            protocol,
            hostname,
            port: upstreamPort,
            path: `${basePath}${target}`,
            method,
            agent,
            headers: { ...headers, authorization: `Bearer ${accessToken}` },
          },
          resolve,
        );
        upstream.on('error', reject);
        if (body !== undefined) upstream.end(body);
        else req.pipe(upstream);
      });
    const { answer, isRenewed } = await sendWithToken(forward, options.tokens, {
      isRefused: (response) => response.statusCode === 401,
      canReplay: body !== undefined,
      discard: (response) => void response.resume(),
    });
    const returned = endToEnd(answer.headers, NOT_RETURNED);
    returned['content-security-policy'] = [[returned['content-security-policy'] ?? []].flat(), CONFINED_POLICY].flat();
    returned['x-content-type-options'] = 'nosniff';
    res.writeHead(answer.statusCode ?? 502, returned);
    answer.pipe(res);
    answer.on('end', () =>
      options.onRequest?.({
        method,
        path,
        status: answer.statusCode ?? 502,
        durationMs: Date.now() - startedMs,
        isRenewed,
      }),
    );
  };
  const listeners = await listenForProxy(
    (req, res) => {
      void handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) refuse(res, 502, 'bad_gateway', error instanceof Error ? error.message : String(error));
        else res.destroy();
      });
    },
    options.port,
    options.socketPath,
  );
  hosts = new Set([`127.0.0.1:${listeners.port}`, `localhost:${listeners.port}`]);
  return {
    url: `http://127.0.0.1:${listeners.port}${options.pathSecret === undefined ? '' : `/${options.pathSecret}`}`,
    socketPath: listeners.socketPath,
    close: async () => {
      await listeners.close();
      agent.destroy();
    },
  };
}
