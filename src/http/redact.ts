import { decodeBasicCredentials } from '../util/basic-auth.js';

/**
 * Redaction for the --verbose HTTP trace. Two layers: fields known to carry secrets are replaced
 * by name (form and JSON bodies, URL queries and fragments, Authorization headers), and every
 * secret value seen so far is scrubbed wherever else it appears (a server echoing it back).
 */

/** What replaces a secret in the trace. */
export const REDACTED = '[redacted]';

/** Parameter and JSON field names whose values are secrets (RFC 6749, RFC 7636, RFC 7009). */
const SECRET_FIELDS = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'code',
  'client_secret',
  'code_verifier',
  'password',
  'assertion',
  'client_assertion',
]);

/** Secret values seen in this process, so that they can be scrubbed from anything printed. */
export class SecretScrubber {
  readonly #secrets = new Set<string>();

  /** Remembers `value` as a secret (values shorter than 6 characters are too common to scrub). */
  remember(value: string | undefined | null): void {
    if (value !== undefined && value !== null && value.length >= 6) {
      this.#secrets.add(value);
    }
  }

  /** `text` with every remembered secret, raw or percent-encoded, replaced by REDACTED. */
  scrub(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      for (const form of new Set([
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ s: secret }).toString().slice(2),
      ])) {
        result = result.split(form).join(REDACTED);
      }
    }
    return result;
  }
}

/** Redacts secret fields of a form-encoded string (`a=1&code=…`), remembering their values. */
export function redactForm(text: string, scrubber: SecretScrubber): string {
  const params = new URLSearchParams(text);
  let isChanged = false;
  for (const [key, value] of [...params]) {
    if (SECRET_FIELDS.has(key)) {
      scrubber.remember(value);
      params.set(key, REDACTED);
      isChanged = true;
    }
  }
  return isChanged ? params.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED) : text;
}

/** Redacts the query and fragment of a URL string. */
export function redactUrl(url: string, scrubber: SecretScrubber): string {
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? undefined : url.slice(hashAt + 1);
  const queryAt = beforeHash.indexOf('?');
  let result =
    queryAt === -1
      ? beforeHash
      : `${beforeHash.slice(0, queryAt)}?${redactForm(beforeHash.slice(queryAt + 1), scrubber)}`;
  if (fragment !== undefined) {
    result += `#${redactForm(fragment, scrubber)}`;
  }
  return result;
}

/** Redacts secret fields of a JSON text at any depth; a text that is not JSON is returned as is. */
export function redactJson(text: string, scrubber: SecretScrubber): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) {
      return node.map(walk);
    }
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(
        Object.entries(node).map(([key, inner]) => {
          if (SECRET_FIELDS.has(key) && (typeof inner === 'string' || typeof inner === 'number')) {
            scrubber.remember(String(inner));
            return [key, REDACTED];
          }
          return [key, walk(inner)];
        }),
      );
    }
    return node;
  };
  return JSON.stringify(walk(value));
}

/** Redacts an HTTP header value: Authorization and cookies keep only their scheme or name. */
export function redactHeader(name: string, value: string, scrubber: SecretScrubber): string {
  const lower = name.toLowerCase();
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const [scheme = '', credentials = ''] = value.split(/\s+/, 2);
    scrubber.remember(credentials);
    // Basic carries client_id:client_secret (RFC 6749 §2.3.1); remember the secret part too.
    const basic = decodeBasicCredentials(value);
    if (basic !== undefined) scrubber.remember(basic.clientSecret);
    return `${scheme} ${REDACTED}`;
  }
  if (lower === 'cookie' || lower === 'set-cookie') {
    return value.replace(/=([^;]*)/g, `=${REDACTED}`);
  }
  return value;
}

/** Redacts a body by its content type: form, JSON, else text scrubbed of known secrets. */
export function redactBody(text: string, contentType: string | undefined, scrubber: SecretScrubber): string {
  const type = (contentType ?? '').toLowerCase();
  let result = text;
  if (type.includes('application/x-www-form-urlencoded')) {
    result = redactForm(text, scrubber);
  } else if (type.includes('json') || /^\s*[[{]/.test(text)) {
    result = redactJson(text, scrubber);
  }
  return scrubber.scrub(result);
}
