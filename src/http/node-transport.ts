import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Transport } from './http-types.js';
import { headerFields, refuseOverLimit, requestHeaders } from './read-body.js';

/**
 * The transport on node:http or node:https, each loaded on first use (TLS costs only https).
 * Never follows a redirect. Node's HTTP parser is native, so a one-shot process pays no WASM start.
 * `signal` ends the exchange wherever it is (request, headers or body) by destroying the request:
 * a listener of our own, not http's `signal` option, whose stream plumbing costs about 0.7 ms at
 * the first request of a process, as the body is read through events, not an async
 * iterator (about 0.3 ms).
 */
export function createNodeTransport(): Transport {
  let http: Promise<typeof import('node:http')> | undefined;
  let https: Promise<typeof import('node:https')> | undefined;
  return async (url, init, body, signal, maxBodyBytes, label) => {
    const { request: send } =
      url.protocol === 'https:' ? await (https ??= import('node:https')) : await (http ??= import('node:http'));
    const headers = requestHeaders(init.headers, init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    let request: ClientRequest | undefined;
    const onAbort = () =>
      request?.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        request = send(url, { method: init.method, headers }, resolve);
        request.on('error', reject);
        if (signal.aborted) onAbort();
        request.end(body);
      });
      const bytes = refuseOverLimit(await readIncoming(response, maxBodyBytes), maxBodyBytes, label);
      return {
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? '',
        headers: headerFields(response.headers),
        body: bytes,
      };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };
}

/**
 * The whole body of `response`, or undefined once it passes `maxBytes` (the response is then
 * destroyed). Rejects with the stream's error, or ECONNRESET "aborted" when it closes before its end.
 */
function readIncoming(response: IncomingMessage, maxBytes: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        response.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => resolve(new Uint8Array(Buffer.concat(chunks, size))));
    response.once('error', reject);
    response.once('close', () => {
      if (!response.complete) reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
  });
}
