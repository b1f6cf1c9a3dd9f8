import { createInterface } from 'node:readline';

/** Lines typed or pasted on stdin while something else is awaited. */
export interface PastedLines extends AsyncIterable<string> {
  /** Stops reading stdin; the iteration then ends. Idempotent. */
  close(): void;
}

/**
 * Reads stdin line by line (paste-back during `login`), without taking over the terminal: no raw
 * mode, so the terminal echoes and edits the line itself. The iteration ends at EOF or close().
 */
export function readPastedLines(stdin: NodeJS.ReadableStream): PastedLines {
  const lines = createInterface({ input: stdin, terminal: false, crlfDelay: Infinity });
  let isClosed = false;
  return {
    [Symbol.asyncIterator]: () => lines[Symbol.asyncIterator](),
    close() {
      if (isClosed) return;
      isClosed = true;
      lines.close();
      // Let the process exit although stdin is still open (a terminal never ends).
      if ('pause' in stdin && typeof stdin.pause === 'function') stdin.pause();
      if ('unref' in stdin && typeof stdin.unref === 'function') (stdin.unref as () => void)();
    },
  };
}
