import { formatDuration } from './format.js';
import type { Output } from './output.js';
import type { TerminalPaste } from './paste-terminal.js';

/** A running "waiting…" indicator. */
export interface WaitIndicator {
  /** Prints a line above the indicator without garbling it. */
  log(print: () => void): void;
  /** Removes the indicator. Idempotent. */
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Shows that mmauth is waiting: on a terminal a spinner with the time left, redrawn every 100 ms
 * (with `paste`, as the paste-back prompt, which readline redraws with what is being typed);
 * elsewhere, or with `isStatic`, one line saying how long it will wait.
 * `deadlineMs` is absolute (epoch ms).
 */
export function startWaitIndicator(
  out: Output,
  message: string,
  deadlineMs: number,
  nowMs: () => number,
  options: { isStatic?: boolean; paste?: Pick<TerminalPaste, 'show' | 'log' | 'close'> } = {},
): WaitIndicator {
  const { paste } = options;
  if (paste !== undefined && out.isTerminal && !out.isJsonRun) {
    // The spinner is the paste prompt: readline redraws it with the line being typed (item 13).
    let frame = 0;
    const draw = () => {
      const left = formatDuration(Math.max(0, deadlineMs - nowMs()) / 1000);
      paste.show(`${FRAMES[frame++ % FRAMES.length] ?? ''} ${message} — ${left} left, Ctrl-C to cancel\n> `);
    };
    const timer = setInterval(draw, 100);
    timer.unref();
    draw();
    return {
      log: (print) => paste.log(print),
      stop() {
        clearInterval(timer);
        paste.close();
      },
    };
  }
  if (!out.isTerminal || options.isStatic === true) {
    out.info(`${message} (up to ${formatDuration((deadlineMs - nowMs()) / 1000)})…`);
    return { log: (print) => print(), stop: () => undefined };
  }
  let frame = 0;
  const draw = () => {
    const left = formatDuration(Math.max(0, deadlineMs - nowMs()) / 1000);
    out.raw(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length] ?? ''} ${message} — ${left} left, Ctrl-C to cancel`);
  };
  const timer = setInterval(draw, 100);
  timer.unref();
  draw();
  let isStopped = false;
  return {
    log(print) {
      out.raw('\r\x1b[2K');
      print();
      if (!isStopped) draw();
    },
    stop() {
      if (isStopped) return;
      isStopped = true;
      clearInterval(timer);
      out.raw('\r\x1b[2K');
    },
  };
}
