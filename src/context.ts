import { createBrowserLauncher, type BrowserLauncher } from './browser/open-browser.js';
import { MmauthError } from './errors.js';
import { createHttpClient } from './http/http-client.js';
import { rememberEnvironmentSecrets } from './http/environment-secrets.js';
import { SecretScrubber } from './http/redact.js';
import { secretsOf, type Profile } from './store/profile.js';
import type { HttpClient } from './http/http-types.js';
import type { StreamedResponse, StreamRequest } from './http/stream-request.js';
import type { AuthorizationRandomness } from './oauth/authorization-code.js';
import { openProfileStore, type CredentialStoreSetting, type ProfileStore } from './store/profile-store.js';
import { createFdWriter, type Writer } from './ui/fd-writer.js';
import { createOutput, type Output, type Paint } from './ui/output.js';
import type { Prompter } from './ui/prompts.js';
import { NO_PROMPTS } from './ui/no-prompts.js';
import { sanitizeForTerminal } from './ui/sanitize.js';
import { readCappedBody } from './util/read-capped-body.js';

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
  /** The working directory (where `.mmauth-profile` is looked for). */
  cwd(): string;
  /** Asks cli.ts to exit with `code` when the command ends well (`exec` passes its child's on). */
  setExitCode(code: number): void;
  /** What setExitCode asked for, if anything. */
  readonly requestedExitCode: number | undefined;
  /** The Output (memoized; loads chalk only on a colour terminal). */
  output(): Promise<Output>;
  prompter: Prompter;
  /** Opens the profile store (MMAUTH_CONFIG_DIR or the platform config dir). */
  openStore(): Promise<ProfileStore>;
  /** An HTTP client whose every request is bounded by `timeoutMs`; `trace` gets the redacted exchange. */
  /**
   * An HTTP client whose requests are bounded by `timeoutMs` and cut off by Ctrl-C (the context's
   * signal), unless `isUninterruptible` (a renewal: what the server mints must be stored).
   */
  http(timeoutMs: number, trace?: (line: string) => void, options?: { isUninterruptible?: boolean }): HttpClient;
  /** A browser launcher; `isVerbose` shows the BROWSER command's stderr. */
  browser(isVerbose: boolean): BrowserLauncher;
  /** Reads a whole file as UTF-8. */
  readTextFile(path: string): Promise<string>;
  /** Reads all of stdin as UTF-8, at most 64 KiB (`input_too_large`). */
  readStdin(): Promise<string>;
  /** Sends a request whose answer streams (`mmauth api`): the transport of createHttpClient, body not read. */
  stream(
    url: URL,
    request: StreamRequest,
    options: { timeoutMs: number; trace?: (line: string) => void; secrets?: readonly string[] },
  ): Promise<StreamedResponse>;
  /** `state` and PKCE verifier source; undefined: oauth4webapi's CSPRNG generators. */
  random?: AuthorizationRandomness;
  /**
   * Every secret this run knows (the environment's, what the store opened, what crossed the wire):
   * scrubbed from every line for people, JSON errors and the trace.
   */
  secrets: SecretScrubber;
  /**
   * How to run this mmauth again (node, its flags, the launcher), set by the command line: a renewal
   * that may outlive a --deadline runs there, detached (token/detached-renewal.ts). Absent in the
   * library and in tests' contexts, where renewals run in this process.
   */
  selfCommand?: readonly string[];
}

/**
 * The client secret the environment gives (MMAUTH_CLIENT_SECRET, trimmed; undefined when unset or
 * blank): the one variable the layers below the commands consult, through here.
 */
export function environmentClientSecret(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.MMAUTH_CLIENT_SECRET?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Remembers every secret a profile holds in `secrets` (client secret, tokens, verifier, the chain). */
export function rememberProfileSecrets(secrets: SecretScrubber, profile: Profile | undefined): Profile | undefined {
  if (profile !== undefined) {
    for (const value of Object.values(secretsOf(profile))) {
      // Replaced tokens carry their expiry after a `!` (encodeReplacedTokens).
      for (const part of (value ?? '').split(' ')) secrets.remember(part.split('!')[0]);
    }
  }
  return profile;
}

/** The store, with every profile it hands out remembered in `secrets`. */
export function rememberingStore(store: ProfileStore, secrets: SecretScrubber): ProfileStore {
  return Object.assign(Object.create(store) as ProfileStore, {
    read: async (...args: Parameters<ProfileStore['read']>) =>
      rememberProfileSecrets(secrets, await store.read(...args)),
    update: async (...args: Parameters<ProfileStore['update']>) =>
      rememberProfileSecrets(secrets, await store.update(...args)),
  });
}

/** The most mmauth reads from stdin (a secret, a token, a redirect URL), in bytes. */
export const MAX_STDIN_BYTES = 64 * 1024;

/** Reads `stdin` whole as UTF-8, at most MAX_STDIN_BYTES; throws `input_too_large` past that. */
export async function readStdinText(stdin: AsyncIterable<Uint8Array | string>): Promise<string> {
  const bytes = await readCappedBody(stdin, MAX_STDIN_BYTES);
  if (bytes === undefined) {
    throw new MmauthError('input_too_large', `standard input is larger than ${MAX_STDIN_BYTES / 1024} KiB`);
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * MMAUTH_CREDENTIAL_STORE: `auto` (also when unset or empty), `keyring` or `file`, case-insensitive.
 * Throws `usage` for anything else.
 */
export function credentialStoreSetting(env: NodeJS.ProcessEnv): CredentialStoreSetting {
  const value = env.MMAUTH_CREDENTIAL_STORE?.trim().toLowerCase() || 'auto';
  if (value === 'auto' || value === 'keyring' || value === 'file') return value;
  throw new MmauthError('usage', `MMAUTH_CREDENTIAL_STORE must be auto, keyring or file, not "${value}"`);
}

/** The parts of `process` createContext needs. */
export interface ProcessLike {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/**
 * What the command line adds to a context, and a program's run never has: its prompts, its
 * colours (both load command-line packages), or silence (the library prints nothing).
 */
export interface ContextOptions {
  /** Writes nothing at all (the library). */
  isSilent?: boolean;
  /** Asks on the terminal (ui/prompts.ts); default: never prompts (NO_PROMPTS). */
  prompter?: Prompter;
  /** Colours for a terminal (ui/colours.ts); default: none. */
  colours?: () => Promise<Paint>;
}

/** A Writer that drops everything: not a terminal, nothing to flush. */
const SILENT_WRITER: Writer = {
  write: () => undefined,
  isTTY: false,
  columns: undefined,
  flush: () => Promise.resolve(),
};

/** Builds the real context over `proc`; `signal` is the Ctrl-C signal cli.ts owns, `version` package.json's (User-Agent). */
export function createContext(
  proc: ProcessLike,
  signal: AbortSignal,
  version = '0.0.0',
  options: ContextOptions = {},
): AppContext {
  let output: Promise<Output> | undefined;
  let store: Promise<ProfileStore> | undefined;
  let requestedExitCode: number | undefined;
  const secrets = new SecretScrubber();
  rememberEnvironmentSecrets(secrets, proc.env, ['MMAUTH_CLIENT_SECRET', 'MMAUTH_TOKEN']);
  // A program's context (the library) prints nothing: its writers drop what they are given.
  const stdout = options.isSilent === true ? SILENT_WRITER : createFdWriter(1, () => proc.stdout);
  const stderr = options.isSilent === true ? SILENT_WRITER : createFdWriter(2, () => proc.stderr);
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
    cwd: () => process.cwd(),
    setExitCode: (code) => {
      requestedExitCode = code;
    },
    get requestedExitCode() {
      return requestedExitCode;
    },
    secrets,
    output: () =>
      (output ??= createOutput({ stdout, stderr }, proc.env, (text) => secrets.scrub(text), options.colours)),
    prompter: options.prompter ?? NO_PROMPTS,
    openStore: () =>
      (store ??= (async () =>
        rememberingStore(
          await openProfileStore({
            configDir: proc.env.MMAUTH_CONFIG_DIR || undefined,
            credentialStore: credentialStoreSetting(proc.env),
            platform: proc.platform,
            interrupt: signal,
            onWarning: (message) => stderr.write(`! ${sanitizeForTerminal(secrets.scrub(message))}\n`),
          }),
          secrets,
        ))()),
    http: (timeoutMs, trace, options) =>
      createHttpClient({
        timeoutMs,
        ...(options?.isUninterruptible === true ? {} : { interrupt: signal }),
        env: proc.env,
        userAgent: `mmauth/${version}`,
        scrubber: secrets,
        ...(trace === undefined ? {} : { trace }),
      }),
    stream: async (url, request, options) =>
      (await import('./http/stream-request.js')).sendStreamRequest(url, request, {
        ...options,
        interrupt: signal,
        env: proc.env,
        userAgent: `mmauth/${version}`,
        scrubber: secrets,
      }),
    browser: (isVerbose) => createBrowserLauncher(proc.env, proc.platform, isVerbose),
    readTextFile: async (path) => (await import('node:fs/promises')).readFile(path, 'utf8'),
    readStdin: () => readStdinText(proc.stdin as AsyncIterable<Uint8Array | string>),
  };
}
