import { InterruptedError, NetworkError } from '../errors.js';

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
}

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
 * Creates the HTTP client on undici (loaded on first use, not at start-up). Redirects are never
 * followed (a 3xx is returned as is, so a secret is never re-sent elsewhere). Every failure to
 * get an answer (refused, reset, DNS, TLS, `timeoutMs` exceeded) is thrown as NetworkError (exit 3)
 * naming the method and URL, or InterruptedError (130) after `interrupt`; an HTTP answer of any
 * status is returned for the caller to judge.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  let transport: Promise<{ fetch: typeof import('undici').fetch; dispatcher: import('undici').Dispatcher }> | undefined;
  const load = () =>
    (transport ??= import('undici').then((undici) => ({
      fetch: undici.fetch,
      dispatcher: new undici.Agent({
        connect: { timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      }),
    })));

  const fetch: HttpFetch = async (url, init) => {
    const { fetch: undiciFetch, dispatcher } = await load();
    const signals = [AbortSignal.timeout(options.timeoutMs), init.signal, options.interrupt].filter((s): s is AbortSignal => s !== undefined);
    const signal = AbortSignal.any(signals);
    const label = `${init.method} ${url}`;
    try {
      const response = await undiciFetch(url, {
        method: init.method,
        ...(init.headers === undefined ? {} : { headers: init.headers }),
        ...(init.body === undefined ? {} : { body: init.body }),
        redirect: 'manual',
        signal,
        dispatcher,
      });
      // undici's Response is the class behind Node's global fetch; the global type describes it.
      return response as unknown as Response;
    } catch (error) {
      if (options.interrupt?.aborted === true) {
        throw new InterruptedError();
      }
      throw describeNetworkFailure(label, error, options.timeoutMs);
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
