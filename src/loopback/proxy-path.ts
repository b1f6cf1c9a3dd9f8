/**
 * Which request paths the API proxy sends on (attacks P2, P11, P12): one reading of a path that
 * every server in front of the service agrees on, and `--allow-paths` matched on whole segments.
 */

/**
 * A dot segment (`.`, `..`, also `%2e`-encoded, also before a `;` parameter) between slashes (also
 * `%2f`), also with whitespace or control characters around it (`..%20`, `..%09`, `%0a..`: servers
 * that trim a segment read it as `..`).
 */
const DOT_SEGMENT =
  /(^|\/|%2f)(%[01][0-9a-f]|%20|%7f|[\s\x00-\x1f\x7f])*(\.|%2e){1,2}(%[01][0-9a-f]|%20|%7f|[\s\x00-\x1f\x7f])*(;[^/]*)?(\/|%2f|$)/i;

/** A backslash, which WHATWG URL and IIS read as a slash (also `%5c`). */
const BACKSLASH = /\\|%5c/i;

/** A NUL byte, as written or percent-encoded: C-based servers end the path there (`/api/maps/..%00/admin`). */
const NUL = /\0|%00/i;

/** Bytes that decode strictly as UTF-8 (overlong forms such as `%c0%ae` do not). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function percentDecoded(path: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const hex = path[i] === '%' ? path.slice(i + 1, i + 3) : '';
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(path[i] ?? '', 'utf8'));
  }
  try {
    return strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

/**
 * Whether `path` (the request target's path, as received) could name another path to some server
 * on the way: a dot segment or a backslash as written, once percent-decoded (so `%252e` counts) or
 * after Unicode compatibility folding (NFKC: a fullwidth `．`, a one-dot leader `․`), or bytes that
 * are no strict UTF-8 (overlong `%c0%ae`, which old decoders read as `.`), or a NUL byte anywhere
 * (encoded or not). RFC 3986 §5.2.4 is how
 * such a server resolves them; clients send none (curl, fetch and requests resolve them first).
 */
export function isAmbiguousPath(path: string): boolean {
  const isAmbiguous = (text: string) => DOT_SEGMENT.test(text) || BACKSLASH.test(text) || NUL.test(text);
  if (isAmbiguous(path)) return true;
  const decoded = percentDecoded(path);
  if (decoded === undefined) return true;
  return isAmbiguous(decoded) || isAmbiguous(decoded.normalize('NFKC'));
}

/**
 * Whether `path` lies under one of `prefixes` by whole segments: `/api/maps` admits `/api/maps` and
 * `/api/maps/…`, not `/api/maps-admin`; a prefix ending in `/` admits what starts with it. Undefined
 * `prefixes`: every path. The prefixes are checked by checkAllowedPaths first.
 */
export function isAllowedPath(path: string, prefixes: readonly string[] | undefined): boolean {
  if (prefixes === undefined) return true;
  return prefixes.some((prefix) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
}

/**
 * What is wrong with an allow-list of path prefixes, in words, or undefined: each must be a path
 * (start with `/`) and hold no ambiguous segment; an empty one would admit everything.
 */
export function allowedPathsProblem(prefixes: readonly string[]): string | undefined {
  for (const prefix of prefixes) {
    if (prefix === '') return 'an empty prefix would admit every path';
    if (!prefix.startsWith('/')) return `"${prefix}" is not a path (it must start with /)`;
    if (isAmbiguousPath(prefix)) return `"${prefix}" holds a dot segment or a backslash`;
  }
  return undefined;
}
