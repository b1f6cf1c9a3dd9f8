import { EventEmitter } from 'node:events';
import { clearScreenDown, createInterface, cursorTo, moveCursor } from 'node:readline';
import type { Writer } from './fd-writer.js';
import { createLineQueue, MAX_PASTED_LINE, releaseStdin, TOO_LONG_LINE, type PastedLines } from './paste.js';

/** Paste-back on a terminal: the lines typed or pasted, under a prompt that may change while the user types. */
export interface TerminalPaste extends PastedLines {
  /** Replaces the prompt (a spinner and the time left), redrawing the line being typed under it intact. */
  show(prompt: string): void;
  /** Prints above the prompt (clears it, prints, draws it again with what was typed). */
  log(print: () => void): void;
}

/**
 * Reads paste-back lines on a terminal through node:readline, whose line editor redraws the prompt
 * and the line being typed together (wrapped over several rows included): a spinner can run on the
 * prompt while a URL is pasted under it, which a bare `\r` redraw would garble.
 * Ctrl-C (the terminal is in raw mode meanwhile) is passed on as SIGINT to this process; Ctrl-D on
 * an empty line ends the lines. A line longer than MAX_PASTED_LINE is yielded as TOO_LONG_LINE.
 * close() gives the terminal back (cooked mode), so that a prompt can read it next.
 */
export function readPastedLinesOnTerminal(
  stdin: NodeJS.ReadableStream & { isTTY?: boolean },
  stderr: Pick<Writer, 'write' | 'columns'>,
): TerminalPaste {
  // readline writes through this to mmauth's stderr writer, and asks it for the terminal's width.
  const output = Object.assign(new EventEmitter(), {
    isTTY: true,
    write: (text: string) => {
      stderr.write(text);
      return true;
    },
    get columns() {
      return stderr.columns ?? 80;
    },
  }) as unknown as NodeJS.WritableStream;
  const rl = createInterface({ input: stdin, output, terminal: true, prompt: '', historySize: 0 });
  const queue = createLineQueue();
  rl.on('line', (line) => queue.push(line.length > MAX_PASTED_LINE ? TOO_LONG_LINE : line));
  rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  rl.on('close', () => queue.end());
  const close = () => {
    if (queue.isEnded) return;
    queue.end(true);
    rl.setPrompt('');
    // Leaves the prompt's row empty, then hands the terminal back.
    output.write('\r\x1b[2K');
    rl.close();
    releaseStdin(stdin);
  };
  return {
    [Symbol.asyncIterator]: () => queue.lines(),
    close,
    show(prompt) {
      if (queue.isEnded) return;
      rl.setPrompt(prompt);
      rl.prompt(true);
    },
    log(print) {
      if (queue.isEnded) {
        print();
        return;
      }
      // From the prompt's first row down, the screen is readline's: clear it, print, draw it again
      // below (its record of the rows it drew reset, as after a line it took).
      moveCursor(output, 0, -rl.getCursorPos().rows);
      cursorTo(output, 0);
      clearScreenDown(output);
      print();
      Object.assign(rl, { prevRows: 0 });
      rl.prompt(true);
    },
  };
}
