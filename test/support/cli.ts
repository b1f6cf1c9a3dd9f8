import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { onTestFinished } from 'vitest';
import { checkJsonDocuments } from './json-documents.js';

/**
 * rmSync's options for a test's scratch tree: recursive, and tried again (up to 10 times, 50 ms
 * longer each) while a process the test started still writes there as it ends (ENOTEMPTY).
 */
export const REMOVE_TREE = { recursive: true, force: true, maxRetries: 10, retryDelay: 50 } as const;

/** The launcher a user runs (`npx mmauth` resolves to it). */
export const BIN = resolve(import.meta.dirname, '../../bin/mmauth.cjs');
/** The headless user agent, as a BROWSER value. */
export const HEADLESS_BROWSER = `${process.execPath} ${resolve(import.meta.dirname, '../../dist/demo/headless-browser.js')}`;

/** How a spawned mmauth ended. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of a spawned run. */
export interface CliOptions {
  /** Added to a clean environment (no MMAUTH_*, BROWSER, NO_COLOR, CI, SSH, display or proxy variables from the outer one). */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; stdin is a pipe (never a TTY) in any case. */
  input?: string;
  /** Leave stdin open after `input` (the test writes more through `child.stdin`). */
  isStdinOpen?: boolean;
  /** Kill the process after this many ms (default 20 s). */
  timeoutMs?: number;
  /** The working directory (default: this process's). */
  cwd?: string;
}

/** A clean environment for a spawned mmauth. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Whatever the developer's shell holds (a corporate proxy, an MMAUTH_PROFILE, CI=true) stays out.
    if (
      !/^(MMAUTH_|BROWSER$|NO_COLOR$|CI$|SSH_|FORCE_COLOR$|DISPLAY$|WAYLAND_DISPLAY$|XDG_RUNTIME_DIR$)/.test(key) &&
      !/^(https?|all|no)_proxy$/i.test(key)
    )
      env[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** A running mmauth process with its output so far. */
export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` on stderr; rejects after `timeoutMs`. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the first match of `pattern` on stdout; rejects after `timeoutMs`. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  done: Promise<CliResult>;
}

/** Spawns `node bin/mmauth.cjs ...args`; killed after the timeout and when the test ends. */
export function startCli(args: string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cleanEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const listener of listeners) listener();
  });
  const waitFor = (name: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolveMatch, reject) => {
      const text = () => (name === 'stdout' ? stdout : stderr);
      const check = () => {
        const match = text().match(pattern);
        if (match !== null) {
          listeners.delete(check);
          clearTimeout(timer);
          resolveMatch(match);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`${name} did not match ${pattern} within ${timeoutMs} ms; ${name} so far:\n${text()}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  // mmauth may stop reading stdin (or exit) before all of `input` is written: that is no test failure.
  child.stdin.on('error', () => undefined);
  if (options.input !== undefined) child.stdin.write(options.input);
  if (options.isStdinOpen !== true) child.stdin.end();
  const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const done = new Promise<CliResult>((resolveDone, reject) => {
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      // Every --json document a run prints answers to its schema (issue 34), or the test fails here.
      const problems = checkJsonDocuments(args, stdout);
      if (problems.length > 0) {
        reject(new Error(`--json documents that break their schemas:\n${problems.join('\n')}\nstdout:\n${stdout}`));
      } else {
        resolveDone({ code, signal, stdout, stderr });
      }
    });
  });
  onTestFinished(() => {
    child.stdin.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitForStderr: (pattern, timeoutMs = 10_000) => waitFor('stderr', pattern, timeoutMs),
    waitForStdout: (pattern, timeoutMs = 10_000) => waitFor('stdout', pattern, timeoutMs),
  };
}

/** Runs mmauth to completion. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** A fresh scratch directory for this test (`mode` 0700 unless given), removed when it ends. */
export function makeScratchDir(prefix = 'mmauth-scratch-', mode?: number): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (mode !== undefined) chmodSync(dir, mode);
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return dir;
}

/** A fresh config directory for this test (MMAUTH_CONFIG_DIR), removed when it ends. */
export function makeConfigDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-test-'));
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return join(dir, 'config');
}

/**
 * The stderr lines of a --json run that are neither warnings (`! `) nor errors (`error: `), nor
 * an indented line continuing one of them: decisions 32 wants none (no human summary beside the
 * document).
 */
export function summaryLines(stderr: string): string[] {
  let isContinuing = false;
  return stderr.split('\n').filter((line) => {
    if (line.startsWith('! ') || line.startsWith('error: ')) isContinuing = true;
    else if (!line.startsWith('  ')) isContinuing = false;
    return line !== '' && !isContinuing;
  });
}
