import type { IncomingHttpHeaders } from 'node:http';

/**
 * Header fields by which a server may take a request for another method: Rack::MethodOverride
 * (which Rails runs in front of every app, Doorkeeper's family included) reads the first; Express's
 * method-override and other frameworks the others.
 */
const OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

/**
 * Content types a server reads form fields from (Rack's `req.POST`): where a `_method` field counts.
 * No media type at all (no `Content-Type`, an empty one, `;charset=…`) counts too: Rack reads a
 * POST without one as a form (`Rack::Request#form_data?`; attacks P10).
 */
const FORM_TYPES = /^\s*(?:(?:application\/x-www-form-urlencoded|multipart\/form-data)\b|[;,]|$)/i;

/**
 * A header field's name as a CGI-style server keys it: puma, Rack and every CGI gateway map `-`
 * and `_` alike to `_` (`HTTP_X_HTTP_METHOD_OVERRIDE`), so `X_HTTP_METHOD_OVERRIDE` is the same field.
 */
const cgiName = (name: string) => name.toLowerCase().replaceAll('_', '-');

/**
 * What would make the service treat a request as a method `allowed` leaves out (`--allow-methods`),
 * in words for the refusal, or undefined when nothing would: a method-override header field naming
 * another method, or a `_method` field in a form body (Rack::MethodOverride turns a POST with
 * `_method=delete` into a DELETE), in any header-name spelling a server maps to the same field
(`X_HTTP_METHOD_OVERRIDE`) and in a body without a media type. `body` is the buffered body, undefined for one streamed through
 * unread: a form body that cannot be read is refused too. Header values and form values are
 * compared in upper case.
 */
export function methodOverride(
  headers: IncomingHttpHeaders,
  body: Uint8Array | undefined,
  allowed: ReadonlySet<string>,
): string | undefined {
  for (const name in headers) {
    const value = headers[name];
    if (!(OVERRIDE_HEADERS as readonly string[]).includes(cgiName(name)) || value === undefined) continue;
    for (const method of [value].flat()) {
      if (!allowed.has(method.trim().toUpperCase())) return `${name}: ${method}`;
    }
  }
  if (!FORM_TYPES.test(headers['content-type'] ?? '')) return undefined;
  if (body === undefined) return 'a form body too large to check for _method';
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
  if (/^\s*multipart\//i.test(headers['content-type'] ?? '')) {
    return /name\s*=\s*"?_method"?/i.test(text) ? 'a _method form field' : undefined;
  }
  const field = new URLSearchParams(text).get('_method');
  return field !== null && !allowed.has(field.trim().toUpperCase()) ? `_method=${field}` : undefined;
}
