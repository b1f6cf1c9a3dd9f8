import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A command running in a real terminal: a detached tmux session on a private server. */
export interface TmuxSession {
  /** Sends keys as tmux names them (`Enter`, `Down`, `Space`, `C-c`), or literal text with `literal`. */
  send(keys: string[], options?: { literal?: boolean }): void;
  /** Everything the terminal has shown so far, scrollback included, wrapped lines joined. */
  screen(): string;
  /** Polls the screen until `pattern` appears; rejects after `timeoutMs` with the screen. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the command's exit status once it has ended (bounded). */
  exitCode(timeoutMs?: number): Promise<number>;
}

/**
 * Starts `argv` in a fresh tmux server (its own socket, no config file) in a 200×50 terminal with
 * exactly `env` as its environment (plus PATH, HOME, TERM). The server is killed when the test ends.
 */
export function startInTmux(argv: string[], env: Record<string, string>): TmuxSession {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-tmux-'));
  const socket = `mmauth-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const exitFile = join(dir, 'exit');
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const baseEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? dir,
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
  };
  const script = join(dir, 'run.sh');
  writeFileSync(script, `${argv.map(quote).join(' ')}\necho "$?" > ${quote(exitFile)}\nsleep 600\n`);
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', timeout: 10_000 });
  const envArgs = Object.entries({ ...baseEnv, ...env }).map(([key, value]) => `${key}=${value}`);
  tmux(
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    '200',
    '-y',
    '50',
    'env',
    '-i',
    ...envArgs,
    'bash',
    '--norc',
    '--noprofile',
    script,
  );
  onTestFinished(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main');
  const poll = async <T>(probe: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what()} within ${timeoutMs} ms; screen:\n${screen()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return {
    send(keys, options = {}) {
      // `--` ends tmux's options, so a key string that starts with '-' (a random secret may) is typed, not parsed.
      tmux('send-keys', '-t', 'main', ...(options.literal === true ? ['-l'] : []), '--', ...keys);
    },
    screen,
    waitFor: (pattern, timeoutMs = 10_000) =>
      poll(
        () => screen().match(pattern) ?? undefined,
        timeoutMs,
        () => `the screen did not show ${pattern}`,
      ),
    exitCode: (timeoutMs = 15_000) =>
      poll(
        () => {
          try {
            const text = execFileSync('cat', [exitFile], {
              encoding: 'utf8',
              stdio: ['ignore', 'pipe', 'ignore'],
            }).trim();
            return text === '' ? undefined : Number(text);
          } catch {
            return undefined;
          }
        },
        timeoutMs,
        () => 'the command did not end',
      ),
  };
}
