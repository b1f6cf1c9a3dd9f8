/**
 * Whether `text` is one word of printable ASCII (0x21–0x7E, no space): what a bearer token may be
 * (RFC 6750 §2.1 b64token, widened), and a client id or a redirect path mmauth accepts.
 */
export function isVisibleWord(text: string): boolean {
  return /^[\x21-\x7e]+$/.test(text);
}
