import { MmauthError } from '../errors.js';

/** Whether a Content-Type names JSON: `application/json` or `application/…+json` (RFC 8259 §11; RFC 6838 §4.2.8). */
export function isJsonContentType(contentType: string): boolean {
  return /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(contentType);
}

/**
 * Reads an answer's body (`bytes`) as strict UTF-8 JSON (RFC 8259 §8.1): invalid UTF-8 is refused
 * rather than decoded with replacement characters that would end up stored. Throws MmauthError
 * `malformed_response`: "`endpoint` sent a malformed answer: …".
 */
export function readJsonBody(bytes: Uint8Array, endpoint: string): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MmauthError('malformed_response', `${endpoint} sent a malformed answer: the body is not valid UTF-8`);
  }
  if (text.trim() === '') {
    throw new MmauthError('malformed_response', `${endpoint} sent a malformed answer: the body is empty`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new MmauthError(
      'malformed_response',
      `${endpoint} sent a malformed answer: the body is not JSON${/^\s*</.test(text) ? ' (it looks like HTML)' : ''}`,
    );
  }
}
