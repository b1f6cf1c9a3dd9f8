/**
 * Control characters (C0 but tab and newline, DEL, C1) and bidirectional overrides and isolates:
 * what a hostile string can use to rewrite a terminal (escape sequences, OSC 52, RLO).
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escape(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` safe to print to a terminal: every unsafe character shown escaped (`\x1b`, `\u202e`); tab and newline kept. */
export function sanitizeForTerminal(text: string): string {
  return text.replace(UNSAFE, escape);
}

/** JSON text with C1 and bidi characters as `\u` escapes (JSON.stringify escapes only C0): the same value, safe on a terminal. */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
