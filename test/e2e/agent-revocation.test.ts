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
/** One call: when it started, the token or `error:CODE` it got, when it ended (epoch ms, this machine's clock). */
type Call = [startedAtMs: number, got: string, endedAtMs: number];
const INDEX = resolve(import.meta.dirname, '../../dist/index.js');

/**
 * A library client asking getToken() every `everyMs` until told to stop, each call as a Call;
 * `calls()` counts those done so far (it says each on stderr); with `useAt`, it calls that URL with each token it gets, as a
 * program does (a server that ends a token on its successor's first use, as Doorkeeper does, learns
 * of the successor this way).
 */
function libraryClient(env: Record<string, string>, options: { everyMs?: number; useAt?: string } = {}) {
  const script = `const { getToken } = await import(${JSON.stringify(INDEX)});
    const calls = []; let stop = false;
    process.on('SIGTERM', () => { stop = true; });
    while (!stop) {
      const started = Date.now();
      try {
        const token = (await getToken()).accessToken;
        calls.push([started, token, Date.now()]);
        ${options.useAt === undefined ? '' : `await fetch(${JSON.stringify(options.useAt)}, { headers: { authorization: 'Bearer ' + token } }).then((r) => r.arrayBuffer());`}
      } catch (error) { calls.push([started, 'error:' + error.code, Date.now()]); }
      process.stderr.write('.');
      await new Promise((r) => setTimeout(r, ${options.everyMs ?? 5}));
    }
    console.log(JSON.stringify(calls));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: cleanEnv(env) });
  onTestFinished(() => void child.kill('SIGKILL'));
  let out = '';
  let done = 0;
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (done += chunk.toString().split('.').length - 1));
  const closed = new Promise<Array<Call>>((resolve) =>
    child.on('close', () => resolve(JSON.parse(out.trim() || '[]') as Array<Call>)),
  );
  return { calls: () => done, stop: () => (child.kill('SIGTERM'), closed) };
}

/** The CLI asking `mmauth token` back to back until stopped; each call as a Call (`calls`: those done so far). */
function cliClient(env: Record<string, string>) {
  const calls: Array<Call> = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const started = Date.now();
      const result = await runCli(['token', '--json'], { env });
      const json = JSON.parse(result.stdout || '{}') as Json;
      const got = result.code === 0 ? (json.access_token as string) : `error:${json.error?.code as string}`;
      calls.push([started, got, Date.now()]);
    }
  })();
  return {
    calls,
    stop: async () => {
      stop = true;
      await loop;
      return calls;
    },
  };
}

/** Resolves once `isDone()` holds (checked every 50 ms); fails the test after 30 s. */
async function until(isDone: () => boolean): Promise<void> {
  const endAt = Date.now() + 30_000;
  while (!isDone()) {
    if (Date.now() > endAt) throw new Error('waited 30 s for the clients');
    await new Promise((r) => setTimeout(r, 50));
  }
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
    // Counted, not timed: on a loaded machine a spawned `mmauth token` may take a second or more.
    await until(() => library.calls() >= 3 && cli.calls.length >= 2);
    const logoutStartedAt = Date.now();
    const logout = await runCli(['logout', '--profile', 'work'], { env });
    expect(logout.code, logout.stderr).toBe(0);
    const loggedOutAt = Date.now();
    const startedAfter = () => cli.calls.filter(([started]) => started > loggedOutAt + 100).length;
    const libraryBefore = library.calls();
    await until(() => startedAfter() >= 2 && library.calls() >= libraryBefore + 20);
    const [libraryCalls, cliCalls] = await Promise.all([library.stop(), cli.stop()]);
    for (const [name, calls] of [
      ['library', libraryCalls],
      ['cli', cliCalls],
    ] as const) {
      // Before: calls that ended before the logout began. After: calls that began 100 ms after it ended.
      const before = calls.filter(([, , ended]) => ended < logoutStartedAt);
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

  it("across 60 s of 10-second tokens at a real Doorkeeper, two library clients through the agent, started 4 s apart and using each token, get no token more than 100 ms after the agent's own renewal ended it", async () => {
    const { doorkeeper, socket } = await doorkeeperAgent({ accessTokenExpiresInS: 10 });
    const useAt = `${doorkeeper.baseUrl}/api/me`;
    // Doorkeeper ends a refreshed token when its successor is first used: each client uses every
    // token it gets, so a renewal the other client's call made ends the token this one may still hold.
    const first = libraryClient(farSideEnv(socket), { everyMs: 20, useAt });
    await new Promise((r) => setTimeout(r, 4_000));
    const second = libraryClient(farSideEnv(socket), { everyMs: 20, useAt });
    await new Promise((r) => setTimeout(r, 56_000));
    const calls = [...(await first.stop()), ...(await second.stop())];
    const tokens = await doorkeeper.tokens();
    const ended = new Map(tokens.map((token) => [token.token, token.revoked_at_ms]));
    // Renewals happened (several lifetimes passed) and ended the tokens they replaced; every call got a token.
    expect(new Set(calls.map(([, got]) => got)).size).toBeGreaterThan(3);
    expect(tokens.filter((token) => token.revoked_at_ms !== null).length).toBeGreaterThan(3);
    expect(calls.filter(([, got]) => got.startsWith('error:'))).toEqual([]);
    const late = calls.filter(([started, got]) => {
      const endedAt = ended.get(got);
      return endedAt !== null && endedAt !== undefined && started > endedAt + 100;
    });
    expect(late, `${late.length} of ${calls.length} calls got a token ended more than 100 ms before`).toEqual([]);
  }, 90_000);
});
