import { PassThrough } from 'node:stream';
import { readFileSync } from 'node:fs';
import { createContext, type AppContext } from '../context.js';

/** package.json's version (the User-Agent's `mmauth/<version>`): two levels up from src/library or dist/library. */
const VERSION = (() => {
  try {
    const json: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return typeof json === 'object' && json !== null && 'version' in json ? String(json.version) : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** A writable that drops everything: the library never prints. */
function silent(): NodeJS.WritableStream & { isTTY: false } {
  const sink = new PassThrough();
  sink.resume();
  return Object.assign(sink, { isTTY: false as const });
}

/**
 * The context the library runs the CLI's own code in: the process's environment with `overrides`
 * on top (`MMAUTH_PROFILE`, `MMAUTH_CONFIG_DIR`, … as the CLI reads them), no terminal (never a
 * prompt, never a browser: stdin is empty and no TTY), output dropped, and `signal` as the
 * interruption of every request. Its profile selection is worked out once: make a new one when the
 * config file changes.
 */
export function createLibraryContext(overrides: NodeJS.ProcessEnv, signal: AbortSignal): AppContext {
  const env = { ...process.env, ...overrides, CI: 'true' };
  const stdin = Object.assign(new PassThrough(), { isTTY: false as const });
  stdin.end();
  return createContext(
    { env, platform: process.platform, stdin, stdout: silent(), stderr: silent() },
    signal,
    VERSION,
    {
      isSilent: true,
    },
  );
}
