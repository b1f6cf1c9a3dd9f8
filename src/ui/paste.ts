import { StringDecoder } from 'node:string_decoder';

/** Lines typed or pasted on stdin while something else is awaited. */
export interface PastedLines extends AsyncIterable<string> {
  /**
   * Stops reading stdin and lets it go (a prompt may read it next); the iteration then ends and
   * lines not yet taken are dropped. Idempotent.
   */
  close(): void;
}

/** The longest line kept, in characters: a redirect URL is far shorter. */
export const MAX_PASTED_LINE = 64 * 1024;

/** What a line longer than MAX_PASTED_LINE is replaced with (refused like any line that is no URL). */
export const TOO_LONG_LINE = '(a line longer than 64 KiB)';

/** Stops reading `stdin` and lets the process exit although it is still open (a terminal never ends). */
export function releaseStdin(stdin: NodeJS.ReadableStream): void {
  stdin.pause();
  if ('unref' in stdin && typeof stdin.unref === 'function') (stdin.unref as () => void)();
}

/** Lines taken as they come and handed out in order until the queue ends (the paste readers' shared part). */
export interface LineQueue {
  push(line: string): void;
  /** Ends the queue; with `isDropping`, lines not yet taken are dropped. Idempotent. */
  end(isDropping?: boolean): void;
  readonly isEnded: boolean;
  /** The lines, waiting for the next one until the queue ends. */
  lines(): AsyncGenerator<string>;
}

/** Creates a LineQueue. */
export function createLineQueue(): LineQueue {
  const queued: string[] = [];
  let isEnded = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(line) {
      queued.push(line);
      notify();
    },
    end(isDropping = false) {
      if (isDropping) queued.length = 0;
      isEnded = true;
      notify();
    },
    get isEnded() {
      return isEnded;
    },
    async *lines() {
      for (;;) {
        const line = queued.shift();
        if (line !== undefined) yield line;
        else if (isEnded) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

/**
 * Reads stdin line by line (paste-back during `login`) without taking over the terminal (no raw
 * mode: the terminal echoes and edits the line itself). A line longer than MAX_PASTED_LINE is
 * yielded as TOO_LONG_LINE and reading stops, so endless input without a newline (`< /dev/zero`)
 * costs bounded memory and time. The iteration ends at EOF or close(). It reads through a `data`
 * listener, never an async iterator of the stream, whose end would destroy stdin: after close(),
 * a prompt can still read it.
 */
export function readPastedLines(stdin: NodeJS.ReadableStream): PastedLines {
  const decoder = new StringDecoder('utf8');
  const queue = createLineQueue();
  let pending = '';
  const stop = (isDropping = false) => {
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    stdin.off('error', onEnd);
    releaseStdin(stdin);
    queue.end(isDropping);
  };
  function onData(chunk: Buffer | string): void {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
      queue.push(pending.slice(0, end).replace(/\r$/, ''));
      pending = pending.slice(end + 1);
    }
    // No redirect URL is that long: say so once and stop reading (stdin may never end).
    if (pending.length > MAX_PASTED_LINE) {
      queue.push(TOO_LONG_LINE);
      stop();
    }
  }
  function onEnd(): void {
    if (pending !== '') queue.push(pending);
    pending = '';
    stop();
  }
  stdin.on('data', onData);
  stdin.once('end', onEnd);
  stdin.once('error', onEnd);
  return { [Symbol.asyncIterator]: () => queue.lines(), close: () => stop(true) };
}
