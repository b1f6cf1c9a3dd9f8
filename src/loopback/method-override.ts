import type { IncomingHttpHeaders } from 'node:http';

/**
 * Header fields by which a server may take a request for another method: Rack::MethodOverride
 * (which Rails runs in front of every app, Doorkeeper's family included) reads the first; Express's
 * method-override and other frameworks the others.
 */
const OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

/** Content types a server reads form fields from (Rack's `req.POST`): where a `_method` field counts. */
const FORM_TYPES = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/**
 * What would make the service treat a request as a method `allowed` leaves out (`--allow-methods`),
 * in words for the refusal, or undefined when nothing would: a method-override header field naming
 * another method, or a `_method` field in a form body (Rack::MethodOverride turns a POST with
 * `_method=delete` into a DELETE). `body` is the buffered body, undefined for one streamed through
 * unread: a form body that cannot be read is refused too. Header values and form values are
 * compared in upper case.
 */
export function methodOverride(
  headers: IncomingHttpHeaders,
  body: Uint8Array | undefined,
  allowed: ReadonlySet<string>,
): string | undefined {
  for (const name of OVERRIDE_HEADERS) {
    const value = headers[name];
    if (value !== undefined && !allowed.has(String(value).trim().toUpperCase())) return `${name}: ${String(value)}`;
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
