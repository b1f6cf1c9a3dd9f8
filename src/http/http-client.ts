import { MmauthError } from '../errors.js';
import { deadlineSignal } from '../util/deadline.js';
import type { HttpClient, HttpFetch, Transport } from './http-types.js';
import { describeNetworkFailure } from './network-failure.js';
import { createNodeTransport } from './node-transport.js';
import { hasProxy, loadProxyTransport, proxySettings } from './proxy-transport.js';
import { requestHeaders } from './read-body.js';
import { SecretScrubber } from './redact.js';
import { traceRequest, traceResponse } from './trace.js';
import { monotonicMs } from '../util/monotonic.js';

/** Options of createHttpClient. */
export interface HttpClientOptions {
  /** Bound on each request, from connect to the last byte of the body (`--timeout`), in ms. */
  timeoutMs: number;
  /** Aborts every request in flight (Ctrl-C); they then fail with `interrupted`. */
  interrupt?: AbortSignal;
  /** Receives the redacted trace of every exchange, one line per call. */
  trace?: (line: string) => void;
  /** Longer bodies are refused (`response_too_large`); default MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** Sent as User-Agent on every request (RFC 9110 §10.1.5), replacing a library's own; default `mmauth`. */
  userAgent?: string;
  /** Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms) are read; none when absent. */
  env?: NodeJS.ProcessEnv;
  /** The run's one scrubber: secrets seen here are scrubbed from everything else printed too. */
  scrubber?: SecretScrubber;
}

/** The default bound on a response body (1 MiB): no OAuth answer comes near it. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Creates the HTTP client: node:http/https, or undici's EnvHttpProxyAgent when a proxy is set in
 * `env` (loaded then, not at start-up). Redirects are never followed (a 3xx is returned as is, so a
 * secret is never re-sent elsewhere). Any HTTP status is returned for the caller to judge; a failure
 * to get an answer throws MmauthError `connection_failed`, `request_timeout` or `tls_failure`
 * naming the method and URL, or `interrupted` after `interrupt`.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const proxy = proxySettings(options.env ?? {});
  const isViaProxy = hasProxy(proxy);
  let transport: Promise<Transport> | undefined;
  const load = () =>
    (transport ??= isViaProxy ? loadProxyTransport(proxy, options.timeoutMs) : Promise.resolve(createNodeTransport()));
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const scrubber = options.scrubber ?? new SecretScrubber();

  const userAgent = options.userAgent ?? 'mmauth';
  const fetch: HttpFetch = async (url, given) => {
    const send = await load();
    const headers = Object.fromEntries(
      Object.entries(given.headers ?? {}).filter(([name]) => name.toLowerCase() !== 'user-agent'),
    );
    // The header fields as sent (the form content type the transport adds included), so the trace shows them.
    const init = { ...given, headers: requestHeaders({ ...headers, 'user-agent': userAgent }, given.body) };
    const deadline = deadlineSignal(options.timeoutMs, [init.signal, options.interrupt]);
    const { signal } = deadline;
    // Method, origin and path: an authorization URL's query (state, code_challenge) is noise in an error line.
    const parsed = new URL(url);
    const label = `${init.method} ${parsed.origin}${parsed.pathname}`;
    const startedMs = monotonicMs();
    if (options.trace !== undefined) traceRequest(options.trace, scrubber, url, init);
    try {
      const body = init.body === undefined ? undefined : String(init.body);
      const response = await send(new URL(url), init, body, signal, maxBodyBytes, label);
      if (options.trace !== undefined) traceResponse(options.trace, scrubber, response, monotonicMs() - startedMs);
      return response;
    } catch (error) {
      if (options.interrupt?.aborted === true) {
        throw new MmauthError('interrupted', 'interrupted');
      }
      if (error instanceof MmauthError) throw error;
      const elapsedMs = Math.round(monotonicMs() - startedMs);
      options.trace?.(`< ${label}: ${error instanceof Error ? error.message : String(error)} after ${elapsedMs} ms`);
      // Past the deadline a transport may report the torn-down socket ("reset"); the cause is the timeout.
      const proxyUrl = isViaProxy
        ? new URL(url).protocol === 'https:'
          ? proxy.httpsProxy
          : proxy.httpProxy
        : undefined;
      throw describeNetworkFailure(label, signal.aborted ? signal.reason : error, options.timeoutMs, proxyUrl);
    } finally {
      deadline.clear();
    }
  };
  return { fetch };
}
