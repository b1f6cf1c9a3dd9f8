import { decodeBasicCredentials } from '../util/basic-auth.js';
import { holdsSecretRun, secretRuns, withholdEcho } from './secret-echo.js';
/**
 * Redaction for the --verbose HTTP trace. Two layers: fields known to carry secrets are replaced
 * by name (form and JSON bodies, URL queries and fragments, Authorization headers), and every
 * secret value seen so far is scrubbed wherever else it appears (a server echoing it back).
 */

/** What replaces a secret in the trace and every printed line. */
export const REDACTED = '[redacted]';

/**
 * Field names whose values are secrets (RFC 6749, RFC 7636, RFC 7009), compared without case,
 * `_` or `-`, so `access_token`, `accessToken` and `Access-Token` are one name.
 */
const SECRET_FIELDS = new Set([
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'token',
  'code',
  'clientsecret',
  'codeverifier',
  'password',
  'assertion',
  'clientassertion',
  'apikey',
  'secret',
]);

/** Parts of a name that mark a credential wherever they stand (`X-Api-Key`, `X-Auth-Token`, `db_password`). */
const SECRET_NAME_PARTS = /token|secret|key|auth|password|passwd|cookie|credential|signature/;

/** Names that match SECRET_NAME_PARTS but carry none: the protocol's own descriptive fields, kept for the trace's sake. */
const DESCRIPTIVE_FIELDS = new Set([
  'tokentype',
  'tokentypehint',
  'issuedtokentype',
  'requestedtokentype',
  'wwwauthenticate',
  'authenticationinfo',
  'tokenendpointauthmethod',
  'keyid',
]);

/** Whether a parameter, field or header name carries a secret. */
export function isSecretField(name: string): boolean {
  const folded = name.toLowerCase().replace(/[-_]/g, '');
  if (SECRET_FIELDS.has(folded)) return true;
  // An error's name (`MmauthError: …`, `TokenError: …`) heads a message, never a secret.
  if (folded.endsWith('error')) return false;
  return !DESCRIPTIVE_FIELDS.has(folded) && SECRET_NAME_PARTS.test(folded);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A pattern matching `secret` in any of the encodings a server might echo it in: each character
 * raw, %-encoded in either case, `+` for a space, or a JSON `\u` escape.
 */
function encodedForms(secret: string): RegExp {
  const parts = [...secret].map((char) => {
    const code = char.codePointAt(0) ?? 0;
    const alternatives = [escapeRegExp(char)];
    for (const byte of Buffer.from(char)) alternatives.push(`%${byte.toString(16).padStart(2, '0')}`);
    if (code <= 0xffff) alternatives.push(`\\\\u${code.toString(16).padStart(4, '0')}`);
    if (char === ' ') alternatives.push('\\+');
    if (char === '/') alternatives.push('\\\\/');
    return `(?:${alternatives.join('|')})`;
  });
  return new RegExp(parts.join(''), 'gi');
}

/** How one secret is found: its plain forms (raw, Base64), and the pattern of its encoded forms, made on first need. */
interface SecretForms {
  plain: string[];
  encoded: RegExp | undefined;
}

/** Secret values seen in this process, so that they can be scrubbed from anything printed. */
export class SecretScrubber {
  readonly #forms = new Map<string, SecretForms>();
  readonly #runs = new Set<string>();

  /** Remembers `value` as a secret (values shorter than 6 characters are too common to scrub). */
  remember(value: string | undefined | null): void {
    if (value === undefined || value === null || value.length < 6 || this.#forms.has(value)) return;
    const base64 = Buffer.from(value).toString('base64');
    const base64Url = Buffer.from(value).toString('base64url');
    const plain = [...new Set([value, base64, base64.replace(/=+$/, ''), base64Url])];
    this.#forms.set(value, { plain, encoded: undefined });
    for (const run of secretRuns(value)) this.#runs.add(run);
  }

  /**
   * `text` with every remembered secret replaced by REDACTED: raw, %-encoded (either case), form-
   * encoded, JSON-escaped, or in Base64 (a Basic credential's whole `id:secret` is remembered too).
   * Plain forms are found by string search; the pattern of encoded forms (slow to run: an
   * alternation per character) only runs on text that holds an escape (`%`, `\`, or `+`). A text
   * still holding a secret in disguise (holdsSecretRun) has its server's words withheld (withholdEcho).
   */
  scrub(text: string): string {
    let result = text;
    const mayBeEncoded = /[%\\+]/.test(text);
    for (const [value, forms] of this.#forms) {
      for (const form of forms.plain) {
        if (result.includes(form)) result = result.replaceAll(form, REDACTED);
      }
      if (mayBeEncoded) {
        forms.encoded ??= encodedForms(value);
        result = result.replace(forms.encoded, REDACTED);
      }
    }
    // What the exact forms missed: a disguise (case, HTML, spaces, hex, a Base64 blob of more than the secret).
    return result.length <= 65_536 && holdsSecretRun(result, this.#runs) ? withholdEcho(result) : result;
  }
}

/**
 * Redacts `name: "value"`, `"name":"value"` and `name=value` pairs of secret fields wherever they
 * stand, for bodies that are neither valid JSON nor declared as a form (malformed JSON, text/plain).
 */
export function redactLooseFields(text: string, scrubber: SecretScrubber): string {
  return text.replace(
    /(["']?)([A-Za-z][\w-]*)\1(\s*[:=]\s*)("((?:[^"\\]|\\.)*)"|([^\s"&,;}\]]+))/g,
    (match, quote: string, name: string, separator: string, _value: string, quoted?: string, bare?: string) => {
      if (!isSecretField(name) || (quoted ?? bare ?? '').startsWith('[redacted')) return match;
      scrubber.remember(quoted ?? bare);
      return `${quote}${name}${quote}${separator}${quoted === undefined ? REDACTED : `"${REDACTED}"`}`;
    },
  );
}

/** Redacts secret fields of a form-encoded string (`a=1&code=…`), remembering their values. */
export function redactForm(text: string, scrubber: SecretScrubber): string {
  const params = new URLSearchParams(text);
  let isChanged = false;
  for (const [key, value] of [...params]) {
    if (isSecretField(key)) {
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
          if (isSecretField(key) && (typeof inner === 'string' || typeof inner === 'number')) {
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
  if (isSecretField(lower)) {
    scrubber.remember(value);
    return REDACTED;
  }
  return scrubber.scrub(value);
}

/**
 * Redacts a body whatever its declared type: as a form when it is one, as JSON when it parses,
 * then secret fields wherever they stand (redactLooseFields), then every known secret value.
 */
export function redactBody(text: string, contentType: string | undefined, scrubber: SecretScrubber): string {
  const type = (contentType ?? '').toLowerCase();
  let result = text;
  if (type.includes('application/x-www-form-urlencoded') || /^[\w.~%-]+=[^\s]*$/.test(text.trim())) {
    result = redactForm(text, scrubber);
  } else if (/^\s*[[{]/.test(text)) {
    result = redactJson(text, scrubber);
  }
  return scrubber.scrub(redactLooseFields(result, scrubber));
}
