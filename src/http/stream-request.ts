import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { MmauthError } from '../errors.js';
import { deadlineSignal } from '../util/deadline.js';
import { describeNetworkFailure } from './network-failure.js';
import { hasProxy, loadProxyDispatcher, proxySettings } from './proxy-transport.js';
import { headerFields } from './read-body.js';
import { SecretScrubber } from './redact.js';
import { traceRequest } from './trace.js';

/** A request whose answer is streamed, not read whole (an API call may return any size). */
export interface StreamRequest {
  method: string;
  /** Header fields as given (lower-case names are not required). */
  headers: Record<string, string>;
  body: Uint8Array | undefined;
}

/** A streamed answer: status, header fields (lower-case names, repeated ones joined) and the body. */
export interface StreamedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** Name/value pairs as received, for `-i`. */
  rawHeaders: string[];
  body: Readable;
}

/** Options of sendStreamRequest. */
export interface StreamOptions {
  /** Bound on the whole exchange, body included, in ms. */
  timeoutMs: number;
  /** Ctrl-C. */
  interrupt?: AbortSignal;
  env: NodeJS.ProcessEnv;
  userAgent: string;
  trace?: (line: string) => void;
  /** Secrets the trace must never show (the bearer token). */
  secrets?: readonly string[];
  /** The run's one scrubber (AppContext.secrets). */
  scrubber?: SecretScrubber;
}

/**
 * Sends one request and hands back the answer with its body still streaming: node:http(s), or
 * undici through HTTP(S)_PROXY (NO_PROXY honoured). Redirects are never followed. Throws
 * `connection_failed`, `request_timeout`, `tls_failure` naming the request, or `interrupted`.
 */
export async function sendStreamRequest(
  url: URL,
  request: StreamRequest,
  options: StreamOptions,
): Promise<StreamedResponse> {
  // The bound covers the body too: it stops when the body is done (or the request fails).
  const deadline = deadlineSignal(options.timeoutMs, [options.interrupt]);
  const { signal } = deadline;
  const headers: Record<string, string> = { ...request.headers, 'user-agent': options.userAgent };
  if (request.body !== undefined) headers['content-length'] = String(request.body.byteLength);
  const label = `${request.method} ${url.href}`;
  if (options.trace !== undefined) {
    const scrubber = options.scrubber ?? new SecretScrubber();
    for (const secret of options.secrets ?? []) scrubber.remember(secret);
    const text = request.body === undefined ? undefined : Buffer.from(request.body).toString('utf8');
    traceRequest(options.trace, scrubber, url.href, { method: request.method, headers, body: text });
  }
  const proxy = proxySettings(options.env);
  try {
    if (hasProxy(proxy)) {
      const { undici, dispatcher } = await loadProxyDispatcher(proxy, options.timeoutMs);
      const response = await undici.request(url, {
        method: request.method as import('undici').Dispatcher.HttpMethod,
        headers,
        body: request.body === undefined ? null : Buffer.from(request.body),
        signal,
        dispatcher,
      });
      const rawHeaders = Object.entries(response.headers).flatMap(([name, value]) =>
        (Array.isArray(value) ? value : [value ?? '']).flatMap((v) => [name, v]),
      );
      return {
        status: response.statusCode,
        statusText: '',
        headers: headerFields(response.headers),
        rawHeaders,
        body: response.body,
      };
    }
    const { request: send } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(url, { method: request.method, headers, signal }, resolve);
      outgoing.on('error', reject);
      outgoing.end(request.body === undefined ? undefined : Buffer.from(request.body));
    });
    response.once('close', deadline.clear);
    return {
      status: response.statusCode ?? 0,
      statusText: response.statusMessage ?? '',
      headers: headerFields(response.headers),
      rawHeaders: response.rawHeaders,
      body: response,
    };
  } catch (error) {
    deadline.clear();
    if (options.interrupt?.aborted === true) throw new MmauthError('interrupted', 'interrupted');
    const proxyUrl = hasProxy(proxy) ? (url.protocol === 'https:' ? proxy.httpsProxy : proxy.httpProxy) : undefined;
    throw describeNetworkFailure(label, signal.aborted ? signal.reason : error, options.timeoutMs, proxyUrl);
  }
}
