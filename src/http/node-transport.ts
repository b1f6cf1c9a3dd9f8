import type { IncomingMessage } from 'node:http';
import type { Transport } from './http-types.js';
import { headerFields, readResponseBody, requestHeaders } from './read-body.js';

/**
 * The transport on node:http or node:https, each loaded on first use (TLS costs only https).
 * Never follows a redirect. Node's HTTP parser is native, so a one-shot process pays no WASM start.
 */
export function createNodeTransport(): Transport {
  let http: Promise<typeof import('node:http')> | undefined;
  let https: Promise<typeof import('node:https')> | undefined;
  return async (url, init, body, signal, maxBodyBytes, label) => {
    const { request: send } =
      url.protocol === 'https:' ? await (https ??= import('node:https')) : await (http ??= import('node:http'));
    const headers = requestHeaders(init.headers, init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(url, { method: init.method, headers, signal }, resolve);
      request.on('error', reject);
      request.end(body);
    });
    const bytes = await readResponseBody(response, maxBodyBytes, label, () => response.destroy());
    return {
      status: response.statusCode ?? 0,
      statusText: response.statusMessage ?? '',
      headers: headerFields(response.headers),
      body: bytes,
    };
  };
}
