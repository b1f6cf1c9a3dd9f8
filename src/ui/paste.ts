import { StringDecoder } from 'node:string_decoder';

/** Lines typed or pasted on stdin while something else is awaited. */
export interface PastedLines extends AsyncIterable<string> {
  /** Stops reading stdin; the iteration then ends. Idempotent. */
  close(): void;
}

/** The longest line kept, in characters: a redirect URL is far shorter. */
export const MAX_PASTED_LINE = 64 * 1024;

/** What a line longer than MAX_PASTED_LINE is replaced with (refused like any line that is no URL). */
export const TOO_LONG_LINE = '(a line longer than 64 KiB)';

/**
 * Reads stdin line by line (paste-back during `login`) without taking over the terminal (no raw
 * mode: the terminal echoes and edits the line itself). A line longer than MAX_PASTED_LINE is
 * yielded as TOO_LONG_LINE and reading stops, so endless input without a newline (`< /dev/zero`)
 * costs bounded memory and time. The iteration ends at EOF or close().
 */
export function readPastedLines(stdin: NodeJS.ReadableStream): PastedLines {
  let isClosed = false;
  const close = () => {
    if (isClosed) return;
    isClosed = true;
    // Let the process exit although stdin is still open (a terminal never ends).
    if ('pause' in stdin && typeof stdin.pause === 'function') stdin.pause();
    if ('unref' in stdin && typeof stdin.unref === 'function') (stdin.unref as () => void)();
  };
  async function* lines(): AsyncGenerator<string> {
    const decoder = new StringDecoder('utf8');
    let pending = '';
    for await (const chunk of stdin) {
      if (isClosed) return;
      pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end).replace(/\r$/, '');
        pending = pending.slice(end + 1);
        yield line;
      }
      if (pending.length > MAX_PASTED_LINE) {
        // No redirect URL is that long: say so once and stop reading (stdin may never end).
        yield TOO_LONG_LINE;
        close();
        return;
      }
    }
    if (!isClosed && pending !== '') yield pending;
  }
  return { [Symbol.asyncIterator]: () => lines(), close };
}
