import { InterruptedError, NetworkError, ServerError } from '../errors.js';
import { redactBody, redactHeader, redactUrl, SecretScrubber } from './redact.js';

/** One HTTP request, in the shape oauth4webapi's `customFetch` hands over. */
export interface HttpRequestInit {
  method: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | undefined;
  redirect?: 'manual';
  signal?: AbortSignal | undefined;
}

/** An HTTP answer, read whole: status, header fields (lower-case names) and the body's bytes. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Lower-case field names; repeated fields joined with ", " (RFC 9110 §5.3). */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A request through mmauth's transport: per-request timeout, no redirects followed, body read whole. */
export type HttpFetch = (url: string, init: HttpRequestInit) => Promise<HttpAnswer>;

/** Options of createHttpClient. */
export interface HttpClientOptions {
  /** Bound on each request, from connect to the last byte of the body (`--timeout`), in ms. */
  timeoutMs: number;
  /** Aborts every request in flight (Ctrl-C); they then fail with InterruptedError (exit 130). */
  interrupt?: AbortSignal;
  /** Receives the redacted trace of every exchange, one line per call (`--verbose`, MMAUTH_DEBUG=1). */
  trace?: (line: string) => void;
  /** Answers with a longer body are refused (ServerError, exit 1); default 1 MiB. */
  maxBodyBytes?: number;
  /** Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms) are read; none when absent. */
  env?: NodeJS.ProcessEnv;
}

/** The proxy settings in `env`, lower case first as curl reads them; undefined when unset. */
export function proxySettings(env: NodeJS.ProcessEnv): { httpProxy?: string; httpsProxy?: string; noProxy?: string } {
  const pick = (name: string) => env[name.toLowerCase()] || env[name] || undefined;
  const settings: { httpProxy?: string; httpsProxy?: string; noProxy?: string } = {};
  const httpProxy = pick('HTTP_PROXY');
  const httpsProxy = pick('HTTPS_PROXY');
  const noProxy = pick('NO_PROXY');
  if (httpProxy !== undefined) settings.httpProxy = httpProxy;
  if (httpsProxy !== undefined) settings.httpsProxy = httpsProxy;
  if (noProxy !== undefined) settings.noProxy = noProxy;
  return settings;
}

/** The default bound on an answer's body: no OAuth answer comes near it. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The transport every server request goes through. */
export interface HttpClient {
  fetch: HttpFetch;
}

/** undici's own timeouts (connect, headers, body), reported like the overall AbortSignal timeout. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

/** One exchange on a transport: the answer read whole (at most `maxBodyBytes`), or a throw. */
type Transport = (url: URL, init: HttpRequestInit, body: string | undefined, signal: AbortSignal, maxBodyBytes: number, label: string) => Promise<HttpAnswer>;

/**
 * Creates the HTTP client. Without HTTP_PROXY/HTTPS_PROXY in `env` requests go through `node:http`
 * and `node:https`; with one they go through undici's EnvHttpProxyAgent (loaded then, not at
 * start-up), which also honours NO_PROXY. Node's own HTTP parser is native, while undici's first
 * request compiles its WASM parser (about +110 ms and +40 MiB for a one-shot CLI), hence the split.
 * Redirects are never followed (a 3xx is returned as is, so a secret is never re-sent elsewhere).
 * The whole body is read within `timeoutMs`, so a body over `maxBodyBytes` is refused (ServerError,
 * exit 1) and `trace` can show it. Every failure to get an answer (refused, reset, DNS, TLS,
 * `timeoutMs` exceeded) is thrown as NetworkError (exit 3) naming the method and URL, or
 * InterruptedError (130) after `interrupt`; an HTTP answer of any status is returned for the
 * caller to judge.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const proxy = proxySettings(options.env ?? {});
  const hasProxy = proxy.httpProxy !== undefined || proxy.httpsProxy !== undefined;
  let transport: Promise<Transport> | undefined;
  const load = () => (transport ??= hasProxy ? loadProxyTransport(proxy, options.timeoutMs) : loadNodeTransport());

  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const scrubber = new SecretScrubber();
  const fetch: HttpFetch = async (url, init) => {
    const send = await load();
    const signals = [AbortSignal.timeout(options.timeoutMs), init.signal, options.interrupt].filter((s): s is AbortSignal => s !== undefined);
    const signal = AbortSignal.any(signals);
    const label = `${init.method} ${url}`;
    const startedMs = performance.now();
    if (options.trace !== undefined) {
      traceRequest(options.trace, scrubber, url, init);
    }
    try {
      const answer = await send(new URL(url), init, init.body === undefined ? undefined : String(init.body), signal, maxBodyBytes, label);
      if (options.trace !== undefined) {
        traceResponse(options.trace, scrubber, answer, performance.now() - startedMs);
      }
      return answer;
    } catch (error) {
      if (options.interrupt?.aborted === true) {
        throw new InterruptedError();
      }
      if (error instanceof ServerError) {
        throw error;
      }
      options.trace?.(`< ${label}: ${error instanceof Error ? error.message : String(error)} after ${Math.round(performance.now() - startedMs)} ms`);
      // Past the deadline a transport may report the torn-down socket ("reset"); the cause is the timeout.
      const failure = describeNetworkFailure(label, signal.aborted ? signal.reason : error, options.timeoutMs);
      if (hasProxy) {
        throw new NetworkError(failure.message, { hint: `${failure.hint ?? ''}; a proxy is set (HTTP_PROXY/HTTPS_PROXY; NO_PROXY exempts hosts): check it too`, cause: error });
      }
      throw failure;
    }
  };
  return { fetch };
}

function tooLarge(label: string, maxBytes: number): ServerError {
  return new ServerError(`${label}: the answer's body is larger than ${Math.round(maxBytes / 1024)} KiB; refused`, {
    hint: 'no OAuth answer is that large: check --base-url',
  });
}

/** The header fields to send: the caller's, plus a form content type for a URLSearchParams body. */
function requestHeaders(init: HttpRequestInit): Record<string, string> {
  const headers = { ...init.headers };
  if (init.body instanceof URLSearchParams && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  }
  return headers;
}

/** Reads a body whole, refusing more than `maxBytes` (ServerError naming the request) after `discard`ing the rest. */
async function readCappedBody(body: AsyncIterable<Uint8Array>, maxBytes: number, label: string, discard: () => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      discard();
      throw tooLarge(label, maxBytes);
    }
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}

/** Received header fields as HttpAnswer keeps them: lower-case names, repeated fields joined. */
function headerFields(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) fields[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return fields;
}

/** The transport on node:http or node:https (each loaded on first use: TLS costs only https); never follows a redirect. */
async function loadNodeTransport(): Promise<Transport> {
  let http: Promise<typeof import('node:http')> | undefined;
  let https: Promise<typeof import('node:https')> | undefined;
  return async (url, init, body, signal, maxBodyBytes, label) => {
    const { request: send } = url.protocol === 'https:' ? await (https ??= import('node:https')) : await (http ??= import('node:http'));
    const headers = requestHeaders(init);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const request = send(url, { method: init.method, headers, signal }, resolve);
      request.on('error', reject);
      request.end(body);
    });
    const bytes = await readCappedBody(response, maxBodyBytes, label, () => response.destroy());
    return { status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: headerFields(response.headers), body: bytes };
  };
}

/** The transport on undici's EnvHttpProxyAgent (loaded on first use), through the proxy `env` names. */
async function loadProxyTransport(proxy: ReturnType<typeof proxySettings>, timeoutMs: number): Promise<Transport> {
  // undici parses HTTP in WebAssembly. For a process that makes a request or two, V8's baseline
  // compiler (Liftoff) alone is enough: without the optimizing tier, undici's first request here
  // took 120 ms and 61 MiB instead of 180 ms and 96 MiB (issue 6).
  (await import('node:v8')).setFlagsFromString('--liftoff-only');
  const undici = await import('undici');
  // EnvHttpProxyAgent: straight to the server unless HTTP(S)_PROXY says otherwise and NO_PROXY
  // does not exempt the host; the proxy is given explicitly, never read behind our back.
  const dispatcher = new undici.EnvHttpProxyAgent({
    httpProxy: '',
    httpsProxy: '',
    noProxy: '',
    ...proxy,
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return async (url, init, body, signal, maxBodyBytes, label) => {
    const response = await undici.request(url, { method: init.method as import('undici').Dispatcher.HttpMethod, headers: requestHeaders(init), body: body ?? null, signal, dispatcher });
    const bytes = await readCappedBody(response.body, maxBodyBytes, label, () => response.body.destroy());
    return { status: response.statusCode, statusText: '', headers: headerFields(response.headers), body: bytes };
  };
}

/**
 * Turns whatever fetch threw into a NetworkError (exit 3) with a one-line message and a hint;
 * a timeout names `--timeout`, a TLS failure names NODE_EXTRA_CA_CERTS.
 */
export function describeNetworkFailure(label: string, error: unknown, timeoutMs: number): NetworkError {
  if (error instanceof NetworkError) {
    return error;
  }
  const name = error instanceof Error ? error.name : '';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  if (name === 'TimeoutError' || name === 'AbortError' || TIMEOUT_CODES.has(code)) {
    return new NetworkError(`${label}: no complete answer within ${timeoutMs / 1000} s`, {
      hint: 'the server is slow or unreachable; raise --timeout SECONDS or try again',
      cause: error,
    });
  }
  if (TLS_CODES.has(code) || /certificate|TLS|SSL/i.test(cause instanceof Error ? cause.message : '')) {
    return new NetworkError(`${label}: TLS failure (${code || (cause instanceof Error ? cause.message : 'unknown')})`, {
      hint: 'if the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate (PEM)',
      cause: error,
    });
  }
  const detail = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' ? 'connection reset' : code === 'ENOTFOUND' ? 'host not found' : code || (cause instanceof Error ? cause.message : String(cause));
  return new NetworkError(`${label}: ${detail}`, {
    hint: 'check --base-url and that the server is running',
    cause: error,
  });
}

/** Longest body shown in the trace, in characters. */
const TRACE_BODY_CHARS = 4096;

function traceBody(trace: (line: string) => void, prefix: string, text: string): void {
  if (text === '') return;
  const shown = text.length > TRACE_BODY_CHARS ? `${text.slice(0, TRACE_BODY_CHARS)}… (${text.length} characters in all)` : text;
  for (const line of shown.split(/\r?\n/)) {
    trace(`${prefix} ${line}`);
  }
}

function traceRequest(trace: (line: string) => void, scrubber: SecretScrubber, url: string, init: HttpRequestInit): void {
  // Headers and body first: redacting them teaches the scrubber the secrets the URL might repeat.
  const headers = Object.entries(init.headers ?? {}).map(([name, value]) => `> ${name}: ${redactHeader(name, value, scrubber)}`);
  const contentType = Object.entries(init.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  const body = init.body === undefined ? '' : redactBody(String(init.body), contentType ?? 'application/x-www-form-urlencoded', scrubber);
  trace(`> ${init.method} ${scrubber.scrub(redactUrl(url, scrubber))}`);
  for (const line of headers) trace(scrubber.scrub(line));
  traceBody(trace, '>', body);
}

function traceResponse(trace: (line: string) => void, scrubber: SecretScrubber, answer: HttpAnswer, elapsedMs: number): void {
  trace(`< ${answer.status}${answer.statusText === '' ? '' : ` ${answer.statusText}`} (${Math.round(elapsedMs)} ms, ${answer.body.byteLength} bytes)`);
  for (const [name, value] of Object.entries(answer.headers)) {
    trace(scrubber.scrub(`< ${name}: ${name === 'location' ? redactUrl(value, scrubber) : redactHeader(name, value, scrubber)}`));
  }
  traceBody(trace, '<', redactBody(new TextDecoder().decode(answer.body), answer.headers['content-type'], scrubber));
}
