import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { onTestFinished } from 'vitest';
import { checkUnnamedDocument } from './json-documents.js';
import { credentialStoreSetting, readStdinText, rememberingStore, type AppContext } from '../../src/context.js';
import { MmauthError } from '../../src/errors.js';
import { createHttpClient } from '../../src/http/http-client.js';
import { rememberEnvironmentSecrets } from '../../src/http/environment-secrets.js';
import { SecretScrubber } from '../../src/http/redact.js';
import type { Keyring } from '../../src/store/keyring.js';
import { openProfileStore, type ProfileStore } from '../../src/store/profile-store.js';
import { noKeyring } from './memory-keyring.js';
import type { BrowserOutcome } from '../../src/browser/open-browser.js';
import type { Writer } from '../../src/ui/fd-writer.js';
import { createOutput, type Output } from '../../src/ui/output.js';
import type { Prompter } from '../../src/ui/prompts.js';
import { REMOVE_TREE } from './cli.js';

/** A Writer that keeps what it was given. */
export interface BufferedWriter extends Writer {
  text(): string;
  bytes(): Buffer;
}

function bufferedWriter(): BufferedWriter {
  const chunks: Buffer[] = [];
  return {
    write: (chunk) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
    },
    isTTY: false,
    columns: undefined,
    flush: async () => undefined,
    text: () => Buffer.concat(chunks).toString('utf8'),
    bytes: () => Buffer.concat(chunks),
  };
}

/** What a browser stand-in does with the authorization URL it is asked to open. */
export type BrowserStandIn = (url: string) => Promise<BrowserOutcome>;

/**
 * A browser stand-in for an auto-approving server: fetches the authorization URL without following
 * the redirect, then goes where the server sent it (the real loopback listener). For the implicit
 * flow it posts the fragment to the listener as the relay page's script would.
 */
/**
 * What a browser does with mmauth's one-time start address: requests it once, keeps the cookie it
 * sets, and goes where it redirects (the authorization URL). Any other URL is returned as it is.
 */
export async function throughStartAddress(opened: string): Promise<{ url: string; cookie: string | undefined }> {
  if (!new URL(opened).pathname.startsWith('/start/')) return { url: opened, cookie: undefined };
  const start = await fetch(opened, { redirect: 'manual' });
  return {
    url: start.headers.get('location') ?? opened,
    cookie: start.headers.getSetCookie()[0]?.split(';')[0],
  };
}

export function followAuthorizeRedirect(visits: string[] = []): BrowserStandIn {
  return async (opened) => {
    // mmauth opens its one-time start address; like a browser, keep the cookie it sets and go on.
    const { url, cookie } = await throughStartAddress(opened);
    visits.push(url);
    const authorize = await fetch(url, { redirect: 'manual' });
    const location = authorize.headers.get('location');
    if (location === null) return { isOpened: false, reason: `no redirect (HTTP ${authorize.status})` };
    const target = new URL(location);
    if (target.hash.length > 1) {
      const fragment = target.hash.slice(1);
      target.hash = '';
      void fetch(target, {
        method: 'POST',
        body: fragment,
        headers: { origin: target.origin, ...(cookie === undefined ? {} : { cookie }) },
      });
    } else {
      void fetch(target, { headers: cookie === undefined ? {} : { cookie } });
    }
    return { isOpened: true, via: 'the test browser' };
  };
}

/** Options of createTestContext. */
export interface TestContextOptions {
  /** The working directory (default: the config directory, which holds no `.mmauth-profile`). */
  cwd?: string;
  env?: Record<string, string>;
  /** Fixed clock, epoch ms; default 2026-11-23T12:00:00Z. */
  nowMs?: number;
  /** Standard input text (ended). */
  stdin?: string;
  /** What opening a browser does; default: nothing opens. */
  browser?: BrowserStandIn;
  /** Fixed `state` and PKCE verifier, instead of random ones. */
  random?: { state: string; codeVerifier: string };
  /** The OS keyring the store uses; default: none (credentials fall back to the file). */
  keyring?: Keyring;
}

/** An AppContext over buffers, a fixed clock and a fresh config directory, plus what it recorded. */
export interface TestContext extends AppContext {
  stdout: BufferedWriter;
  stderr: BufferedWriter;
  configDir: string;
  /** Moves the fixed clock. */
  advance(seconds: number): void;
  store(): Promise<ProfileStore>;
}

const NO_PROMPTS: Prompter = {
  canPrompt: false,
  secret: async (message, alternatives) => {
    throw new MmauthError('prompt_unavailable', `${message} is needed and this is a test`, { hint: alternatives });
  },
  text: async (message, alternatives) => {
    throw new MmauthError('prompt_unavailable', `${message} is needed and this is a test`, { hint: alternatives });
  },
  checkbox: async (message, _choices, alternatives) => {
    throw new MmauthError('prompt_unavailable', `${message} is needed and this is a test`, { hint: alternatives });
  },
};

/**
 * Builds the AppContext commands run with in-process: buffered stdout/stderr (no terminal, no
 * colour), a fixed clock, a config directory of its own (removed when the test ends), the real
 * HTTP client and store, no prompts, and an optional browser stand-in and fixed randomness.
 */
export function createTestContext(options: TestContextOptions = {}): TestContext {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-ctx-'));
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  const configDir = join(dir, 'config');
  const env: NodeJS.ProcessEnv = { MMAUTH_CONFIG_DIR: configDir, ...options.env };
  let nowMs = options.nowMs ?? Date.parse('2026-11-23T12:00:00Z');
  const stdout = bufferedWriter();
  // Every --json document an in-process run prints answers to a schema of schemas/ (issue 34).
  onTestFinished(() => {
    const problems = checkUnnamedDocument(stdout.text());
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
  const stderr = bufferedWriter();
  const stdin = new PassThrough();
  stdin.end(options.stdin ?? '');
  const interrupt = new AbortController();
  onTestFinished(() => interrupt.abort());
  let output: Promise<Output> | undefined;
  let store: Promise<ProfileStore> | undefined;
  const secrets = new SecretScrubber();
  rememberEnvironmentSecrets(secrets, env, ['MMAUTH_CLIENT_SECRET', 'MMAUTH_TOKEN']);
  let requestedExitCode: number | undefined;
  const keyring = options.keyring;
  const openStore = () =>
    (store ??= (async () =>
      rememberingStore(
        await openProfileStore({
          configDir: env.MMAUTH_CONFIG_DIR ?? configDir,
          credentialStore: credentialStoreSetting(env),
          openKeyring: keyring === undefined ? noKeyring : async () => keyring,
        }),
        secrets,
      ))());
  const browser = options.browser;
  const random = options.random;
  return {
    env,
    platform: process.platform,
    stdin,
    stdout,
    stderr,
    signal: interrupt.signal,
    nowMs: () => nowMs,
    cwd: () => options.cwd ?? configDir,
    setExitCode: (code) => {
      requestedExitCode = code;
    },
    get requestedExitCode() {
      return requestedExitCode;
    },
    secrets,
    output: () => (output ??= createOutput({ stdout, stderr }, env, (text) => secrets.scrub(text))),
    prompter: NO_PROMPTS,
    openStore,
    store: openStore,
    http: (timeoutMs, trace) =>
      createHttpClient({
        timeoutMs,
        interrupt: interrupt.signal,
        env,
        scrubber: secrets,
        ...(trace === undefined ? {} : { trace }),
      }),
    stream: async (url, request, streamOptions) =>
      (await import('../../src/http/stream-request.js')).sendStreamRequest(url, request, {
        ...streamOptions,
        interrupt: interrupt.signal,
        env,
        userAgent: 'mmauth/test',
        scrubber: secrets,
      }),
    browser: () => ({ open: browser ?? (async () => ({ isOpened: false, reason: 'no browser in this test' })) }),
    readTextFile: async (path) => (await import('node:fs/promises')).readFile(path, 'utf8'),
    readStdin: () => readStdinText(stdin),
    ...(random === undefined ? {} : { random: { state: () => random.state, codeVerifier: () => random.codeVerifier } }),
    configDir,
    advance: (seconds) => {
      nowMs += seconds * 1000;
    },
  };
}
