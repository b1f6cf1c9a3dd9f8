import { createBrowserLauncher, type BrowserLauncher } from './browser/open-browser.js';
import { createHttpClient, type HttpClient } from './http/http-client.js';
import { openProfileStore, type ProfileStore } from './store/profile-store.js';
import { createFdWriter, type Writer } from './ui/fd-writer.js';
import { createOutput, type Output } from './ui/output.js';
import { createPrompter, type Prompter } from './ui/prompts.js';

/** Every side effect a command may have, built once in cli.ts; tests build their own. */
export interface AppContext {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Data only (a bare token, JSON, help text). */
  stdout: Writer;
  /** Everything for people. */
  stderr: Writer;
  /** Aborted when the user presses Ctrl-C. */
  signal: AbortSignal;
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** The Output (memoized; loads chalk only on a colour terminal). */
  output(): Promise<Output>;
  prompter: Prompter;
  /** Opens the profile store (MMAUTH_CONFIG_DIR or the platform config dir). */
  openStore(): Promise<ProfileStore>;
  /** An HTTP client whose every request is bounded by `timeoutMs`; `trace` gets the redacted exchange. */
  http(timeoutMs: number, trace?: (line: string) => void): HttpClient;
  /** A browser launcher; `isVerbose` shows the BROWSER command's stderr. */
  browser(isVerbose: boolean): BrowserLauncher;
  /** Reads a whole file as UTF-8. */
  readTextFile(path: string): Promise<string>;
  /** Reads all of stdin as UTF-8. */
  readStdin(): Promise<string>;
}

/** The parts of `process` createContext needs. */
export interface ProcessLike {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** Builds the real context over `proc`; `signal` is the Ctrl-C signal cli.ts owns. */
export function createContext(proc: ProcessLike, signal: AbortSignal): AppContext {
  let output: Promise<Output> | undefined;
  let store: Promise<ProfileStore> | undefined;
  const stdout = createFdWriter(1, () => proc.stdout);
  const stderr = createFdWriter(2, () => proc.stderr);
  return {
    env: proc.env,
    platform: proc.platform,
    // A getter: process.stdin creates its stream on first touch (about 2 ms), and few commands read it.
    get stdin() {
      return proc.stdin;
    },
    stdout,
    stderr,
    signal,
    nowMs: () => Date.now(),
    output: () => (output ??= createOutput({ stdout, stderr }, proc.env)),
    prompter: createPrompter(proc),
    openStore: () => (store ??= openProfileStore({ configDir: proc.env.MMAUTH_CONFIG_DIR || undefined })),
    http: (timeoutMs, trace) => createHttpClient({ timeoutMs, interrupt: signal, env: proc.env, ...(trace === undefined ? {} : { trace }) }),
    browser: (isVerbose) => createBrowserLauncher(proc.env, proc.platform, isVerbose),
    readTextFile: async (path) => (await import('node:fs/promises')).readFile(path, 'utf8'),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of proc.stdin) {
        chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      }
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
