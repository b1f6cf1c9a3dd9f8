import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';
import { mayCarryToken } from '../../http/authenticated-request.js';

/** The request flags of `mmauth api`. */
export interface ApiRequestOptions {
  method?: string;
  header: string[];
  data?: string;
  field: string[];
}

/** A request ready to send: method, URL, header fields (no Authorization) and a buffered body. */
export interface ApiRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
}

/** The largest body `-d @file` / `-d @-` may carry (buffered, so that a replay is always possible), in bytes. */
export const MAX_API_BODY_BYTES = 10 * 1024 * 1024;

/**
 * The URL of `target`: a path joined to the base URL, or an absolute URL on the base URL's origin
 * (scheme, host, port). Another origin throws `foreign_url` (exit 2) before any connection: the
 * token never goes elsewhere.
 */
export function resolveApiUrl(target: string, baseUrl: string): URL {
  const { origin } = new URL(baseUrl);
  if (/^[a-z][a-z\d+.-]*:/i.test(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new MmauthError('usage', `"${target}" is not a URL or a path`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new MmauthError(
        'usage',
        `"${target}" is not an http(s) URL: give a path (/api/…) or a URL on the base URL`,
      );
    }
    if (!mayCarryToken(url, baseUrl)) {
      throw new MmauthError(
        'foreign_url',
        `${url.origin} is not the profile's server (${origin}); the token is sent only there`,
        {
          hint: 'give a path (/api/…), or a URL on the base URL; another server needs a profile of its own (--profile)',
        },
      );
    }
    return url;
  }
  const path = target.startsWith('/') ? target : `/${target}`;
  return new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
}

/**
 * Header fields mmauth owns besides Authorization: they route (Host) or frame (Content-Length,
 * Transfer-Encoding, Connection, Upgrade) the request, and a user's value could send the bearer
 * token to another site behind a shared front end, or smuggle a second request.
 */
const OWNED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade']);

/**
 * `-H "Name: value"` as a name and a value; Authorization and the routing and framing fields are
 * mmauth's, and a value with a control character is refused (invalid_header, exit 2).
 */
function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon <= 0 ? '' : text.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~\w-]+$/.test(name)) {
    throw new MmauthError('invalid_header', `-H "${text}" is not "Name: value"`);
  }
  if (name.toLowerCase() === 'authorization') {
    throw new MmauthError(
      'invalid_header',
      "the Authorization header is mmauth's: it sends the profile's token itself",
      {
        hint: 'drop -H "Authorization: …"; pick the token with --profile',
      },
    );
  }
  if (OWNED_HEADERS.has(name.toLowerCase())) {
    throw new MmauthError('invalid_header', `the ${name} header is mmauth's: it routes and frames the request itself`);
  }
  const value = text.slice(colon + 1).trim();
  if (/[\r\n\0]/.test(value)) throw new MmauthError('invalid_header', `-H ${name}: the value holds a line break`);
  // RFC 9110 §5.5: field values are visible characters, spaces and tabs (obs-text aside).
  if (/[\u0001-\u0008\u000a-\u001f\u007f]/.test(value)) {
    throw new MmauthError('invalid_header', `-H ${name}: the value holds a control character`);
  }
  return [name, value];
}

/** The body of `-d`: the string itself, `@file`'s bytes, or stdin's for `@-`, at most MAX_API_BODY_BYTES. */
async function readData(data: string, ctx: AppContext): Promise<Uint8Array> {
  if (!data.startsWith('@')) return new TextEncoder().encode(data);
  const tooLarge = () =>
    new MmauthError('input_too_large', `the request body is larger than ${MAX_API_BODY_BYTES / 1024 / 1024} MiB`, {
      hint: 'mmauth api buffers the body so that it can replay it after a renewal',
    });
  if (data === '@-') {
    const { readCappedBody } = await import('../../util/read-capped-body.js');
    const bytes = await readCappedBody(ctx.stdin as AsyncIterable<Uint8Array | string>, MAX_API_BODY_BYTES);
    if (bytes === undefined) throw tooLarge();
    return bytes;
  }
  const { createReadStream } = await import('node:fs');
  const { readCappedBody } = await import('../../util/read-capped-body.js');
  const path = data.slice(1);
  // Read with the cap whatever the file is: a FIFO, /dev/zero or a /proc file reports size 0.
  const stream = createReadStream(path);
  try {
    const bytes = await readCappedBody(stream, MAX_API_BODY_BYTES, () => stream.destroy());
    if (bytes === undefined) throw tooLarge();
    return bytes;
  } catch (error) {
    if (error instanceof MmauthError) throw error;
    throw new MmauthError('unreadable_secret_file', `cannot read the body file ${path}`, { cause: error });
  } finally {
    stream.destroy();
  }
}

function isJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(Buffer.from(bytes).toString('utf8'));
    return bytes.byteLength > 0;
  } catch {
    return false;
  }
}

/**
 * Builds the request of `mmauth api` (gh api's rules): `-f key=value` fields go to the query for
 * `-X GET`, else into a JSON object body; `-d` is the raw body (`@file`, `@-`); the method is GET,
 * or POST with a body; a JSON body gets `Content-Type: application/json` unless `-H` sets one.
 * Throws `foreign_url`, `invalid_header`, `input_too_large`, `usage`.
 */
export async function buildApiRequest(
  target: string,
  baseUrl: string,
  options: ApiRequestOptions,
  ctx: AppContext,
): Promise<ApiRequest> {
  const url = resolveApiUrl(target, baseUrl);
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' };
  for (const text of options.header) {
    const [name, value] = parseHeader(text);
    headers[name.toLowerCase()] = value;
  }
  if (options.data !== undefined && options.field.length > 0) {
    throw new MmauthError('conflicting_options', '-d and -f exclude each other: give the body one way');
  }
  const fields = options.field.map((text) => {
    const equals = text.indexOf('=');
    if (equals <= 0) throw new MmauthError('usage', `-f "${text}" is not key=value`);
    return [text.slice(0, equals), text.slice(equals + 1)] as const;
  });
  const method = (options.method ?? (options.data !== undefined || fields.length > 0 ? 'POST' : 'GET')).toUpperCase();
  // RFC 9110 §9.1: a method is a token; `-X 'GET /x'` would rewrite the request line.
  if (!/^[!#$%&'*+.^_`|~\w-]+$/.test(method)) throw new MmauthError('usage', `-X "${method}" is not an HTTP method`);
  // CONNECT asks for a tunnel, not a resource (RFC 9110 §9.3.6): no API request (attacks W15).
  if (method === 'CONNECT')
    throw new MmauthError('usage', '-X CONNECT opens a tunnel; mmauth api sends requests for resources');
  let body: Uint8Array | undefined;
  if (fields.length > 0 && method === 'GET') {
    for (const [key, value] of fields) url.searchParams.append(key, value);
  } else if (fields.length > 0) {
    body = new TextEncoder().encode(JSON.stringify(Object.fromEntries(fields)));
  } else if (options.data !== undefined) {
    body = await readData(options.data, ctx);
  }
  if (body !== undefined && headers['content-type'] === undefined && isJson(body)) {
    headers['content-type'] = 'application/json';
  }
  return { method, url, headers, body };
}
