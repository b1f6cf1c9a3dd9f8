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
 * Shows that mmauth is waiting: on a terminal a spinner with the time left, redrawn every 100 ms,
 * as the paste-back prompt when `paste` is given (readline redraws it with what is being typed, item
 * 13), else on its own line; elsewhere, and under --json, one line saying how long it will wait
 * (which --json drops). `deadlineMs` is absolute (epoch ms).
 */
export function startWaitIndicator(
  out: Output,
  message: string,
  deadlineMs: number,
  nowMs: () => number,
  options: { paste?: Pick<TerminalPaste, 'show' | 'log' | 'close'> } = {},
): WaitIndicator {
  if (!out.isTerminal || out.isJsonRun) {
    out.info(`${message} (up to ${formatDuration((deadlineMs - nowMs()) / 1000)})…`);
    return { log: (print) => print(), stop: () => undefined };
  }
  let frame = 0;
  const line = () => {
    const left = formatDuration(Math.max(0, deadlineMs - nowMs()) / 1000);
    return `${FRAMES[frame++ % FRAMES.length] ?? ''} ${message} — ${left} left, Ctrl-C to cancel`;
  };
  const { paste } = options;
  const draw = paste === undefined ? () => out.raw(`\r\x1b[2K${line()}`) : () => paste.show(`${line()}\n> `);
  const timer = setInterval(draw, 100);
  timer.unref();
  draw();
  let isStopped = false;
  return {
    log(print) {
      if (paste !== undefined) {
        paste.log(print);
        return;
      }
      out.raw('\r\x1b[2K');
      print();
      if (!isStopped) draw();
    },
    stop() {
      if (isStopped) return;
      isStopped = true;
      clearInterval(timer);
      if (paste === undefined) out.raw('\r\x1b[2K');
      else paste.close();
    },
  };
}
