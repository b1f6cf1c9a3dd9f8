/**
 * The agent's clients never outlive the agent's knowledge: while the host logs out, clients with
 * another HOME and an empty config keep asking through the agent, from the library (one process,
 * getToken in a loop) and from the CLI; no call that started more than 100 ms after the logout
 * ended gets the revoked token.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { doorkeeperAgent, farSideEnv, hostProfiles, startAgent } from '../support/agent.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;
const INDEX = resolve(import.meta.dirname, '../../dist/index.js');

/** A library client asking getToken() every 5 ms until told to stop; each call as [startedAtMs, token or error code]. */
function libraryClient(env: Record<string, string>) {
  const script = `const { getToken } = await import(${JSON.stringify(INDEX)});
    const calls = []; let stop = false;
    process.on('SIGTERM', () => { stop = true; });
    while (!stop) {
      const started = Date.now();
      try { calls.push([started, (await getToken()).accessToken]); } catch (error) { calls.push([started, 'error:' + error.code]); }
      await new Promise((r) => setTimeout(r, 5));
    }
    console.log(JSON.stringify(calls));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: cleanEnv(env) });
  onTestFinished(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const done = new Promise<Array<[number, string]>>((done) =>
    child.on('close', () => done(JSON.parse(out.trim() || '[]') as Array<[number, string]>)),
  );
  return { stop: () => (child.kill('SIGTERM'), done) };
}

/** The CLI asking `mmauth token` back to back until stopped; each call as [startedAtMs, token or error code]. */
function cliClient(env: Record<string, string>) {
  const calls: Array<[number, string]> = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const started = Date.now();
      const result = await runCli(['token', '--json'], { env });
      const json = JSON.parse(result.stdout || '{}') as Json;
      calls.push([started, result.code === 0 ? (json.access_token as string) : `error:${json.error?.code as string}`]);
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await loop;
      return calls;
    },
  };
}

describe('the agent and revocation', () => {
  it("while the host logs out, no call through the agent that started 100 ms after the logout gets the revoked token (the library's client and the CLI)", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const revoked = (readConfig(configDir) as Json).profiles.work.token.access_token as string;
    const far = farSideEnv(socket);
    const library = libraryClient(far);
    const cli = cliClient(far);
    await new Promise((r) => setTimeout(r, 1_500));
    const logout = await runCli(['logout', '--profile', 'work'], { env });
    expect(logout.code, logout.stderr).toBe(0);
    const loggedOutAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_500));
    const [libraryCalls, cliCalls] = await Promise.all([library.stop(), cli.stop()]);
    for (const [name, calls] of [
      ['library', libraryCalls],
      ['cli', cliCalls],
    ] as const) {
      const before = calls.filter(([started]) => started < loggedOutAt - 500);
      const after = calls.filter(([started]) => started > loggedOutAt + 100);
      expect(before.length, `${name}: calls before the logout`).toBeGreaterThan(0);
      expect(
        before.every(([, got]) => got === revoked),
        `${name}: the token before`,
      ).toBe(true);
      expect(after.length, `${name}: calls after the logout`).toBeGreaterThan(0);
      const handedOut = after.filter(([, got]) => got === revoked);
      expect(handedOut, `${name}: the revoked token after the logout`).toEqual([]);
      expect(
        after.every(([, got]) => got === 'error:not_logged_in'),
        JSON.stringify(after.slice(0, 3)),
      ).toBe(true);
    }
  }, 60_000);

  it("across 60 s of 10-second tokens at a real Doorkeeper, the library's client through the agent gets no token more than 100 ms after the agent's own renewal ended it", async () => {
    const { doorkeeper, socket } = await doorkeeperAgent({ accessTokenExpiresInS: 10 });
    const library = libraryClient(farSideEnv(socket));
    await new Promise((r) => setTimeout(r, 60_000));
    const calls = await library.stop();
    const ended = new Map((await doorkeeper.tokens()).map((token) => [token.token, token.revoked_at_ms]));
    // Renewals happened (several lifetimes passed), and every call got a token.
    expect(new Set(calls.map(([, got]) => got)).size).toBeGreaterThan(3);
    expect(calls.filter(([, got]) => got.startsWith('error:'))).toEqual([]);
    const late = calls.filter(([started, got]) => {
      const endedAt = ended.get(got);
      return endedAt !== null && endedAt !== undefined && started > endedAt + 100;
    });
    expect(late, `${late.length} of ${calls.length} calls got a token ended more than 100 ms before`).toEqual([]);
  }, 90_000);
});
