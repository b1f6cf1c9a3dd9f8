import type { Readable } from 'node:stream';
import type { Writer } from './fd-writer.js';
import { escapeJsonForTerminal, sanitizeForTerminal } from './sanitize.js';

/** How `mmauth api` shows an answer. */
export interface ApiOutputOptions {
  /** `-i`: the status line and header fields first. */
  isInclude: boolean;
  /** `--silent`: no body. */
  isSilent: boolean;
  /** Colour a terminal's JSON (NO_COLOR unset); never when piped. */
  isColour?: boolean;
}

/** Colours pretty-printed JSON for a terminal: keys cyan, strings green, numbers, booleans and null yellow. */
export async function colourJson(text: string): Promise<string> {
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return text.replace(
    /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
    (match, string?: string, colon?: string, literal?: string, number?: string) => {
      if (string !== undefined) return colon === undefined ? chalk.green(string) : `${chalk.cyan(string)}${colon}`;
      if (literal !== undefined || number !== undefined) return chalk.yellow(match);
      return match;
    },
  );
}

/** The answer to show: status, reason, header fields as received, and the streaming body. */
export interface ApiAnswer {
  status: number;
  statusText: string;
  rawHeaders: string[];
  body: Readable;
}

/** The most of a body shown on a terminal, in bytes (a pipe or file gets every byte). */
const MAX_TERMINAL_BODY = 10 * 1024 * 1024;

async function readForTerminal(body: Readable): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += bytes.byteLength;
    if (size > MAX_TERMINAL_BODY) {
      body.destroy();
      return undefined;
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/** The body as a terminal may show it: pretty JSON (coloured with `isColour`), sanitised text, or undefined for binary. */
async function forTerminal(bytes: Buffer, isColour: boolean): Promise<string | undefined> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  if (text.includes('\u0000')) return undefined;
  let pretty: string;
  try {
    pretty = escapeJsonForTerminal(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    return sanitizeForTerminal(text);
  }
  return isColour ? colourJson(pretty) : pretty;
}

/**
 * Writes an API answer to `stdout`: with `isInclude` the status line and header fields (sanitised
 * on a terminal); then the body byte for byte when stdout is not a terminal (binary safe), or on a
 * terminal pretty-printed JSON or sanitised text, a binary body refused with `onNote`. Resolves
 * when the body has been written (or drained with `isSilent`).
 */
export async function writeApiAnswer(
  answer: ApiAnswer,
  stdout: Writer,
  options: ApiOutputOptions,
  onNote: (line: string) => void,
): Promise<void> {
  const isTerminal = stdout.isTTY;
  if (options.isInclude) {
    const lines = [`HTTP/1.1 ${answer.status}${answer.statusText === '' ? '' : ` ${answer.statusText}`}`];
    for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2)
      lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
    // A terminal gets plain lines (each field sanitised, no CR shown as \x0d); a pipe, HTTP's own CRLF.
    stdout.write(
      isTerminal ? `${lines.map((line) => sanitizeForTerminal(line)).join('\n')}\n\n` : `${lines.join('\r\n')}\r\n\r\n`,
    );
  }
  if (options.isSilent) {
    answer.body.resume();
    return;
  }
  if (!isTerminal) {
    for await (const chunk of answer.body) stdout.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return;
  }
  const bytes = await readForTerminal(answer.body);
  const text = bytes === undefined ? undefined : await forTerminal(bytes, options.isColour === true);
  if (text === undefined) {
    onNote('the body is binary (or over 10 MiB): not shown on a terminal; redirect stdout to a file, e.g. > body.bin');
    return;
  }
  stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
