import { MmauthError } from '../errors.js';
import { readCappedBody } from '../util/read-capped-body.js';

/**
 * Reads a response body whole; past `maxBytes` it `discard`s the rest and throws MmauthError
 * `response_too_large` naming the request (`label`).
 */
export async function readResponseBody(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  label: string,
  discard: () => void,
): Promise<Uint8Array> {
  return refuseOverLimit(await readCappedBody(body, maxBytes, discard), maxBytes, label);
}

/** `bytes`, or `response_too_large` naming `label` when a reader gave up past `maxBytes` (undefined). */
export function refuseOverLimit(bytes: Uint8Array | undefined, maxBytes: number, label: string): Uint8Array {
  if (bytes === undefined) {
    const limit = `${Math.round(maxBytes / 1024)} KiB`;
    throw new MmauthError('response_too_large', `${label}: the answer's body is larger than ${limit}; refused`);
  }
  return bytes;
}

/** The header fields to send: the caller's, plus a form content type for a URLSearchParams body. */
export function requestHeaders(headers: Record<string, string> | undefined, body: unknown): Record<string, string> {
  const fields = { ...headers };
  if (body instanceof URLSearchParams && !Object.keys(fields).some((name) => name.toLowerCase() === 'content-type')) {
    fields['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  }
  return fields;
}

/** Received header fields as HttpResponse keeps them: lower-case names, repeated fields joined. */
export function headerFields(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) fields[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return fields;
}
