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

/** A fetch bound to mmauth's transport: per-request timeout, no redirects followed. */
export type HttpFetch = (url: string, init: HttpRequestInit) => Promise<Response>;

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

/** Statuses whose Response must have a null body (Fetch standard). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

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

/**
 * Creates the HTTP client on undici (loaded on first use, not at start-up), through the proxy that
 * HTTP_PROXY / HTTPS_PROXY / NO_PROXY in `env` name (undici's EnvHttpProxyAgent). Redirects are never
 * followed (a 3xx is returned as is, so a secret is never re-sent elsewhere). The whole body is
 * read within `timeoutMs` before the Response is returned, so a body over `maxBodyBytes` is refused
 * (ServerError, exit 1) and `trace` can show it. Every failure to get an answer (refused, reset,
 * DNS, TLS, `timeoutMs` exceeded) is thrown as NetworkError (exit 3) naming the method and URL, or
 * InterruptedError (130) after `interrupt`; an HTTP answer of any status is returned for the
 * caller to judge.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const proxy = proxySettings(options.env ?? {});
  const hasProxy = proxy.httpProxy !== undefined || proxy.httpsProxy !== undefined;
  let transport: Promise<{ fetch: typeof import('undici').fetch; dispatcher: import('undici').Dispatcher }> | undefined;
  const load = () =>
    (transport ??= import('undici').then((undici) => ({
      fetch: undici.fetch,
      // EnvHttpProxyAgent: straight to the server unless HTTP(S)_PROXY says otherwise and NO_PROXY
      // does not exempt the host; the proxy is given explicitly, never read behind our back.
      dispatcher: new undici.EnvHttpProxyAgent({
        httpProxy: '',
        httpsProxy: '',
        noProxy: '',
        ...proxy,
        connect: { timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      }),
    })));

  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const scrubber = new SecretScrubber();
  const fetch: HttpFetch = async (url, init) => {
    const { fetch: undiciFetch, dispatcher } = await load();
    const signals = [AbortSignal.timeout(options.timeoutMs), init.signal, options.interrupt].filter((s): s is AbortSignal => s !== undefined);
    const signal = AbortSignal.any(signals);
    const label = `${init.method} ${url}`;
    const startedMs = performance.now();
    if (options.trace !== undefined) {
      traceRequest(options.trace, scrubber, url, init);
    }
    try {
      const response = await undiciFetch(url, {
        method: init.method,
        ...(init.headers === undefined ? {} : { headers: init.headers }),
        ...(init.body === undefined ? {} : { body: init.body }),
        redirect: 'manual',
        signal,
        dispatcher,
      });
      const body = await readBody(response.body, maxBodyBytes, label);
      if (options.trace !== undefined) {
        traceResponse(options.trace, scrubber, response, body, performance.now() - startedMs);
      }
      // A fresh Response over the bytes read: callers may read it (and clone it) as usual.
      return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers as unknown as Headers,
      });
    } catch (error) {
      if (options.interrupt?.aborted === true) {
        throw new InterruptedError();
      }
      if (error instanceof ServerError) {
        throw error;
      }
      options.trace?.(`< ${label}: ${error instanceof Error ? error.message : String(error)} after ${Math.round(performance.now() - startedMs)} ms`);
      const failure = describeNetworkFailure(label, error, options.timeoutMs);
      if (hasProxy) {
        throw new NetworkError(failure.message, { hint: `${failure.hint ?? ''}; a proxy is set (HTTP_PROXY/HTTPS_PROXY; NO_PROXY exempts hosts): check it too`, cause: error });
      }
      throw failure;
    }
  };
  return { fetch };
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

/** Reads a whole body, refusing more than `maxBytes` (ServerError naming the request). */
async function readBody(body: ReadableStream<Uint8Array> | null, maxBytes: number, label: string): Promise<Uint8Array> {
  if (body === null) {
    return new Uint8Array(0);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      throw new ServerError(`${label}: the answer's body is larger than ${Math.round(maxBytes / 1024)} KiB; refused`, {
        hint: 'no OAuth answer is that large: check --base-url',
      });
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
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

function traceResponse(trace: (line: string) => void, scrubber: SecretScrubber, response: { status: number; statusText: string; headers: { forEach(f: (value: string, name: string) => void): void; get(name: string): string | null } }, body: Uint8Array, elapsedMs: number): void {
  trace(`< ${response.status} ${response.statusText} (${Math.round(elapsedMs)} ms, ${body.byteLength} bytes)`);
  response.headers.forEach((value, name) => {
    trace(scrubber.scrub(`< ${name}: ${name.toLowerCase() === 'location' ? redactUrl(value, scrubber) : redactHeader(name, value, scrubber)}`));
  });
  traceBody(trace, '<', redactBody(new TextDecoder().decode(body), response.headers.get('content-type') ?? undefined, scrubber));
}
