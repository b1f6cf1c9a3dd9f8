/**
 * A server that echoes a request can hand a secret back disguised: upper- or lower-cased, HTML-
 * escaped, spaced out or interleaved with other characters, in hex, as `\u` escapes, reversed, or
 * inside a Base64 blob of the whole body (attacks N24/N25). Exact matching misses those, so a text is also searched, in every such view, for any
 * 12-character run of a remembered secret; a text that holds one has its server-supplied part
 * withheld (withholdEcho).
 */

/** How many characters of a secret, in a row, count as the secret (a token is 43; 12 is 72 random bits). */
export const SECRET_RUN = 12;

/** Every SECRET_RUN-character run of `secret`, lower-cased (the whole of a shorter one). */
export function secretRuns(secret: string): string[] {
  const lower = secret.toLowerCase();
  if (lower.length <= SECRET_RUN) return [lower];
  const runs: string[] = [];
  for (let i = 0; i + SECRET_RUN <= lower.length; i++) runs.push(lower.slice(i, i + SECRET_RUN));
  return runs;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

/** Decodes HTML character references: named ones of ENTITIES, `&#NN;` and `&#xHH;`. */
function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (match, name: string) => {
    const lower = name.toLowerCase();
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith('#') && lower !== '#39') return String.fromCodePoint(Number(lower.slice(1)));
    return ENTITIES[lower] ?? match;
  });
}

/** Decodes `\uXXXX`, `\xHH` and `%HH` escapes (each byte as one character: enough to find an ASCII secret). */
function unescapeCodes(text: string): string {
  return text
    .replace(/\\u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\x([0-9a-f]{2})|%([0-9a-f]{2})/gi, (_, a?: string, b?: string) =>
      String.fromCharCode(parseInt(a ?? b ?? '0', 16)),
    );
}

/** Runs of hex digits (24 or more: 12 bytes), decoded. */
function hexBlobs(text: string): string[] {
  return (text.match(/(?:[0-9a-f]{2}){12,}/gi) ?? []).map((hex) => Buffer.from(hex, 'hex').toString('latin1'));
}

/** Base64 and base64url blobs (16 or more characters), decoded, at each of the 4 alignments a run may start on. */
function base64Blobs(text: string): string[] {
  const blobs = text.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [];
  return blobs.flatMap((blob) =>
    [0, 1, 2, 3].map((skip) =>
      Buffer.from(blob.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'),
    ),
  );
}

/**
 * `text` with every escape as printed (`\u0080`, `\x1b`) and every character no token or secret
 * holds removed: what stands between a secret's characters (C1 controls, zero-width spaces, the
 * escapes a `--json` document or the terminal shows them as) no longer hides it.
 */
function secretAlphabetOnly(lower: string): string {
  return lower.replace(/\\+(u[0-9a-f]{4}|x[0-9a-f]{2})/g, '').replace(/[^a-z0-9._~+/=-]+/g, '');
}

/**
 * The views of `text` a disguised secret would show plainly in: lower-cased, without white space,
 * without anything between its characters, each decoding, and each of those reversed.
 */
export function echoViews(text: string): string[] {
  const decoded = unescapeCodes(unescapeHtml(text));
  const views = [text, decoded, ...hexBlobs(decoded), ...base64Blobs(text), ...base64Blobs(decoded)];
  return views.flatMap((view) => {
    const lower = view.toLowerCase();
    const plain = [lower, lower.replace(/[\s\u0000-\u001f]+/g, ''), secretAlphabetOnly(lower)];
    return [...plain, ...plain.map((form) => [...form].reverse().join(''))];
  });
}

/** Whether `text` holds a SECRET_RUN-character run of one of `secrets` in any view (echoViews). */
export function holdsSecretRun(text: string, runs: ReadonlySet<string>): boolean {
  if (runs.size === 0 || text.length < SECRET_RUN) return false;
  for (const view of echoViews(text)) {
    for (const run of runs) if (view.includes(run)) return true;
  }
  return false;
}

/** The note that stands where a server's words were withheld. */
export const WITHHELD = "[the server's description was withheld: it echoed a secret]";

/**
 * `text` with its server-supplied part withheld: mmauth's own words end at the first ` — ` (the
 * OAuth error code, then the server's description: describe-error.ts) or the first `: `; what follows
 * is replaced by WITHHELD.
 */
export function withholdEcho(text: string): string {
  const dash = text.indexOf(' — ');
  if (dash !== -1) return `${text.slice(0, dash)} — ${WITHHELD}`;
  const colon = text.indexOf(': ');
  return colon === -1 ? WITHHELD : `${text.slice(0, colon)}: ${WITHHELD}`;
}
