import type { Writer } from './fd-writer.js';
import { escapeJsonForTerminal, sanitizeForTerminal } from './sanitize.js';
import { versioned } from './json-document.js';

/** Where output goes: stdout carries data only; every human message goes to stderr. */
export interface OutputStreams {
  stdout: Pick<Writer, 'write'>;
  stderr: Pick<Writer, 'write' | 'isTTY'>;
}

/** What commands print through; every line for people is sanitised (sanitizeForTerminal). The only importer of chalk. */
export interface Output {
  /** One line of data on stdout (a bare token, a header). */
  data(line: string): void;
  /**
   * One JSON document on stdout, pretty-printed, snake_case keys as given; with `redact`, every
   * known secret scrubbed (error documents, doctor's report), never for a document whose job is a
   * secret. Each document (each element of an array document) carries
   * `schema_version` first; `bare` leaves it out (`header --json`: a map of headers).
   */
  json(value: unknown, options?: { redact?: boolean; bare?: boolean; isOnStderr?: boolean }): void;
  /** A plain human line on stderr (none under --json: the project's rules). */
  info(line: string): void;
  /**
   * A line the user must act on for the run to go on (the URL to open, where to paste), on stderr
   * even under --json: it is part of the interaction, not a summary of it.
   */
  instruct(line: string): void;
  /** A success line on stderr (green ✓ on a colour terminal; none under --json). */
  success(line: string): void;
  /** A warning on stderr (yellow). */
  warn(line: string): void;
  /** An error line on stderr (red `error:`), with an optional dimmed hint line. */
  error(line: string, hint?: string): void;
  /** A failed check on stderr (red `✗`, never `error:`: the run goes on), with an optional dimmed fix line. */
  failed(line: string, fix?: string): void;
  /** A label: value line on stderr, the label dimmed (none under --json). */
  field(label: string, value: string): void;
  /** A diagnostic line on stderr (dimmed), for --verbose. */
  debug(line: string): void;
  /** Writes raw text to stderr (progress indicators; none under --json). */
  raw(text: string): void;
  /**
   * Marks the run as a --json run: from then on stderr carries warnings, errors, --verbose lines
   * and instructions only, never the human summary (the project's rules, an earlier change).
   */
  setJsonRun(): void;
  /** Whether setJsonRun was called. */
  readonly isJsonRun: boolean;
  /** Whether stderr is a terminal (progress may redraw lines). */
  readonly isTerminal: boolean;
  /** Whether a JSON document went to stdout (so that a failure under --json prints no second one). */
  readonly hasPrintedJson: boolean;
}

export interface Paint {
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const plain: Paint = { green: (t) => t, yellow: (t) => t, red: (t) => t, dim: (t) => t, bold: (t) => t };

/**
 * Creates the Output. Colour only when stderr is a TTY, NO_COLOR is unset or empty
 * (no-color.org), and `colours` is given (the command line's: ui/colours.ts, chalk loaded only
 * then, so non-interactive runs and programs never load it). `scrub` removes the run's known
 * secrets from every line for people.
 */
export async function createOutput(
  streams: OutputStreams,
  env: NodeJS.ProcessEnv,
  scrub: (text: string) => string = (text) => text,
  colours?: () => Promise<Paint>,
): Promise<Output> {
  const isTerminal = streams.stderr.isTTY === true;
  const isColour = isTerminal && (env.NO_COLOR ?? '') === '' && colours !== undefined;
  const paint = isColour ? await colours() : plain;
  const err = (line: string) => streams.stderr.write(`${line}\n`);
  let hasPrintedJson = false;
  let isJsonRun = false;
  // The human summary: dropped under --json, where stdout's document says it.
  const summary = (line: string) => {
    if (!isJsonRun) err(line);
  };
  // Whatever a server, a user or the environment supplied is shown escaped, never obeyed, and no
  // secret this run knows is shown at all (the project's rules: every line for people).
  const safe = (line: string) => sanitizeForTerminal(scrub(line));
  return {
    isTerminal,
    data: (line) => streams.stdout.write(`${line}\n`),
    json: (value, options = {}) => {
      hasPrintedJson = true;
      const document = options.bare === true ? value : versioned(value);
      // Redacted string by string, so that a withheld echo (scrub) never breaks the document.
      const text = JSON.stringify(options.redact === true ? scrubStrings(document, scrub) : document, null, 2);
      // A helper form's error (`header --json`): its stdout is read as a header map, so it stays empty.
      (options.isOnStderr === true ? streams.stderr : streams.stdout).write(`${escapeJsonForTerminal(text)}\n`);
    },
    get hasPrintedJson() {
      return hasPrintedJson;
    },
    get isJsonRun() {
      return isJsonRun;
    },
    setJsonRun: () => {
      isJsonRun = true;
    },
    info: (line) => summary(safe(line)),
    instruct: (line) => err(safe(line)),
    success: (line) => summary(`${paint.green('✓')} ${safe(line)}`),
    warn: (line) => err(`${paint.yellow('!')} ${paint.yellow(safe(line))}`),
    error: (line, hint) => {
      err(`${paint.red(paint.bold('error:'))} ${safe(line)}`);
      if (hint !== undefined) {
        err(paint.dim(`  ${safe(hint)}`));
      }
    },
    failed: (line, fix) => {
      err(`${paint.red('✗')} ${safe(line)}`);
      if (fix !== undefined) err(paint.dim(`  ${safe(fix)}`));
    },
    field: (label, value) => summary(`  ${paint.dim(`${label}:`.padEnd(14))} ${safe(value)}`),
    debug: (line) => err(paint.dim(safe(line))),
    raw: (text) => {
      if (!isJsonRun) streams.stderr.write(text);
    },
  };
}

/** `value` with every string in it (keys aside) passed through `scrub`. */
function scrubStrings(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((item) => scrubStrings(item, scrub));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrubStrings(item, scrub)]));
  }
  return value;
}
