/**
 * The library's login() where it cannot go on: no browser can open (and no openBrowser given) fails
 * at once with `no_browser`, not after `wait`; an unknown client gets the command line's code
 * (`authorization_request_rejected`), not `client_secret_required`; hints name the library's
 * options, not the command line's flags. Run as a program runs it: the built package, a process of
 * its own, a clean environment (no display, no BROWSER).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, makeConfigDir } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;
const INDEX = resolve(import.meta.dirname, '../../dist/index.js');

/** Runs `body` (an async function's body, `lib` the package) in a node process; resolves with its JSON line and how long it took. */
function inProgram(body: string, env: Record<string, string>): Promise<{ result: Json; ms: number }> {
  const script = `const lib = await import(${JSON.stringify(INDEX)});
    try { console.log(JSON.stringify(await (async () => { ${body} })())); }
    catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message, hint: error.hint, exitCode: error.exitCode })); }`;
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: cleanEnv(env) });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', () => {
      clearTimeout(timer);
      try {
        done({ result: JSON.parse(out.trim().split('\n').at(-1) ?? '') as Json, ms: Date.now() - started });
      } catch {
        fail(new Error(`no result: ${out} ${err}`));
      }
    });
  });
}

describe('login() where it cannot go on', () => {
  it('no browser can open here and no openBrowser was given: no_browser within 15 s (not callback_timeout after wait), naming the openBrowser option', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CREDENTIAL_STORE: 'file' };
    const { result, ms } = await inProgram(
      `return lib.login({ baseUrl: ${JSON.stringify(emulator.baseUrl)}, clientId: 'mmauth-public' });`,
      env,
    );
    expect(result.code).toBe('no_browser');
    expect(result.exitCode).toBe(2);
    expect(result.hint).toContain('openBrowser');
    expect(ms).toBeLessThan(15_000);
  }, 30_000);

  it("an unknown client gets the command line's code (authorization_request_rejected), never client_secret_required", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CREDENTIAL_STORE: 'file' };
    const { result } = await inProgram(
      `return lib.login({ baseUrl: ${JSON.stringify(emulator.baseUrl)}, clientId: 'nobody-registered-this', openBrowser: () => undefined });`,
      env,
    );
    expect(result.code).toBe('authorization_request_rejected');
  }, 30_000);

  it('hints name the library’s options, not flags: an unknown profile', async () => {
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CREDENTIAL_STORE: 'file' };
    const { result } = await inProgram(`return lib.getToken({ profile: 'nope' });`, env);
    expect(result.code).toBe('unknown_profile');
    // A command to run at a terminal (in backquotes) may name its flags; the words around it may not.
    const words = `${result.message} ${result.hint}`.replace(/`[^`]*`/g, '');
    expect(words).not.toMatch(/--(profile|base-url|client-id|min-ttl)\b/);
    expect(result.hint).toContain('the profile option');
  }, 30_000);
});
