import { fstatSync, statSync, writeSync } from 'node:fs';

/** Where a command's text goes: stdout or stderr, written at once. */
export interface Writer {
  /** Writes `text` (UTF-8) or bytes whole before returning (or hands them to the stream when the descriptor would block). */
  write(text: string | Uint8Array): void;
  /** Whether the descriptor is a terminal; judged on first use. */
  readonly isTTY: boolean;
  /** The terminal's width in columns; undefined when it is not a terminal. */
  readonly columns: number | undefined;
  /** Resolves when everything written has reached the descriptor. */
  flush(): Promise<void>;
}

/** A stream over the same descriptor (process.stdout or process.stderr), created only when needed. */
export type StreamSource = () => NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * Whether descriptor `fd` is a terminal, asking `stream` (which creates Node's stream for it, about
 * 2 ms) only for a character device other than /dev/null: fstat alone tells that a pipe, a file, a
 * socket or /dev/null (`2>/dev/null`, a script's usual stderr) is none.
 */
export function isTerminalFd(fd: number, stream: () => { isTTY?: boolean }): boolean {
  try {
    const stat = fstatSync(fd);
    if (!stat.isCharacterDevice()) return false;
    const devNull = statSync('/dev/null', { throwIfNoEntry: false });
    if (devNull !== undefined && devNull.rdev === stat.rdev) return false;
    return stream().isTTY === true;
  } catch {
    return false;
  }
}

/**
 * A Writer on file descriptor `fd` (1 for stdout, 2 for stderr) that writes with fs.writeSync, so a command that only
 * prints never creates Node's stdout/stderr stream: creating one loads net, stream and tty (about
 * 3 ms of a 20 ms start-up). It falls back to `stream()` for good when the
 * descriptor is non-blocking and full (EAGAIN), and stops writing when the reader has gone (EPIPE,
 * e.g. `mmauth token | head -c 0`). Whether it is a terminal is judged by isTerminalFd.
 */
export function createFdWriter(fd: number, stream: StreamSource): Writer {
  let fallback: ReturnType<StreamSource> | undefined;
  let isClosed = false;
  let isTerminal: boolean | undefined;
  const isTTY = (): boolean => {
    isTerminal ??= isTerminalFd(fd, stream);
    return isTerminal;
  };
  return {
    write(text) {
      if (isClosed) return;
      if (fallback !== undefined) {
        fallback.write(text);
        return;
      }
      let bytes =
        typeof text === 'string'
          ? Buffer.from(text, 'utf8')
          : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
      while (bytes.byteLength > 0) {
        try {
          bytes = bytes.subarray(writeSync(fd, bytes));
        } catch (error) {
          const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
          if (code === 'EAGAIN') {
            fallback = stream();
            fallback.write(bytes);
          } else if (code === 'EPIPE') {
            isClosed = true;
          } else {
            throw error;
          }
          return;
        }
      }
    },
    get isTTY() {
      return isTTY();
    },
    get columns() {
      return isTTY() ? stream().columns : undefined;
    },
    flush() {
      const pending = fallback;
      return pending === undefined ? Promise.resolve() : new Promise((resolve) => pending.write('', () => resolve()));
    },
  };
}
