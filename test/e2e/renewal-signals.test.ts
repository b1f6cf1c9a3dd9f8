/**
 * Nothing the server mints is lost to a signal or a bound: a renewal request, once sent, is stored
 * (or its grant ended) whatever happens to the one who asked. Each case signals (or stops waiting)
 * right after the server minted (a real Doorkeeper 5.5), while a gate in front of it holds the
 * answer; then `logout` must leave no access token live and every refresh token Doorkeeper holds
 * for the client refused.
 */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, startCli } from '../support/cli.js';
import type { TestDoorkeeper } from '../support/doorkeeper.js';
import { readConfig } from '../support/emulator.js';
import type { GateProxy } from '../support/gate-proxy.js';
import { expectNoGrantLive, makeStale, signedInThroughGate, tokenRequestsSeen } from '../support/gated-doorkeeper.js';
import { until } from '../support/until.js';

type Json = Record<string, any>;

const signedIn = () => signedInThroughGate();
const refreshesSeen = tokenRequestsSeen;

/** After logout: no access token Doorkeeper holds is live, and no refresh token it holds works. */
async function expectNothingLive(doorkeeper: TestDoorkeeper, gate: GateProxy, env: Record<string, string>) {
  gate.set('POST /oauth2/token', 'pass');
  const logout = await runCli(['logout'], { env, timeoutMs: 60_000 });
  expect(logout.code, logout.stderr).toBe(0);
  await expectNoGrantLive(doorkeeper);
}

describe('a renewal already sent is stored, whatever happens to the one who asked', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const)(
    '`mmauth token` sent %s right after the server minted: exit %i, nothing on stdout; the new pair is stored; logout ends it',
    async (signal, code) => {
      const { doorkeeper, gate, configDir, env } = await signedIn();
      const before = makeStale(configDir);
      gate.set('POST /oauth2/token', { answerDelayMs: 3_000 });
      const seenBefore = refreshesSeen(gate);
      const running = startCli(['token'], { env, timeoutMs: 60_000 });
      await until(() => refreshesSeen(gate) === seenBefore + 1, 15_000, 'the renewal reached the server', 25);
      running.child.kill(signal);
      const result = await running.done;
      expect(result.code, `${String(result.signal)} ${result.stderr}`).toBe(code);
      expect(result.stdout).toBe('');
      const after = (readConfig(configDir) as Json).profiles.default.token as Json;
      expect(after.access_token).not.toBe(before.access_token);
      await expectNothingLive(doorkeeper, gate, env);
    },
    60_000,
  );

  it('Ctrl-C on `mmauth proxy` while it renews: the pair the server minted is stored; logout ends it', async () => {
    const { doorkeeper, gate, configDir, env } = await signedIn();
    const before = makeStale(configDir);
    gate.set('POST /oauth2/token', { answerDelayMs: 3_000 });
    const seenBefore = refreshesSeen(gate);
    // The proxy renews the stale token as it starts; Ctrl-C comes while the server's answer is held.
    const proxy = startCli(['proxy', '--json'], { env, timeoutMs: 60_000 });
    await until(() => refreshesSeen(gate) === seenBefore + 1, 15_000, 'the renewal reached the server', 25);
    proxy.child.kill('SIGINT');
    const result = await proxy.done;
    expect(result.stderr).not.toContain('could not renew');
    const after = (readConfig(configDir) as Json).profiles.default.token as Json;
    expect(after.access_token).not.toBe(before.access_token);
    await expectNothingLive(doorkeeper, gate, env);
  }, 60_000);

  it('`mmauth exec` sent SIGTERM while it renews before starting its child: exit 143, the child never started; the pair is stored; logout ends it', async () => {
    const { doorkeeper, gate, configDir, env } = await signedIn();
    const before = makeStale(configDir);
    gate.set('POST /oauth2/token', { answerDelayMs: 3_000 });
    const marker = join(makeConfigDir(), 'started');
    const seenBefore = refreshesSeen(gate);
    const running = startCli(['exec', '--', 'sh', '-c', `touch ${marker}; sleep 30`], { env, timeoutMs: 60_000 });
    await until(() => refreshesSeen(gate) === seenBefore + 1, 15_000, 'the renewal reached the server', 25);
    running.child.kill('SIGTERM');
    const result = await running.done;
    expect(result.code, result.stderr).toBe(143);
    const after = (readConfig(configDir) as Json).profiles.default.token as Json;
    expect(after.access_token).not.toBe(before.access_token);
    await expectNothingLive(doorkeeper, gate, env);
  }, 60_000);

  it("a --deadline renewal whose answer comes after the caller's --timeout: its own process stores it (its budget is its own); logout ends it", async () => {
    const { doorkeeper, gate, configDir, env } = await signedIn();
    const before = makeStale(configDir);
    gate.set('POST /oauth2/token', { answerDelayMs: 5_000 });
    const result = await runCli(['token', '--deadline', '2', '--timeout', '3'], { env, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${before.access_token as string}\n`);
    let after: Json = before;
    await until(
      () => {
        after = (readConfig(configDir) as Json).profiles.default.token as Json;
        return after.access_token !== before.access_token;
      },
      20_000,
      'the detached renewal stored the late answer',
      25,
    );
    await expectNothingLive(doorkeeper, gate, env);
  }, 60_000);

  it("the library's getToken aborted while the answer comes after its 30 s bound: the renewal goes on in the process and is stored; logout ends it", async () => {
    const { doorkeeper, gate, configDir, env } = await signedIn();
    const before = makeStale(configDir);
    gate.set('POST /oauth2/token', { answerDelayMs: 31_000 });
    const index = resolve(import.meta.dirname, '../../dist/index.js');
    const script = `const { getToken } = await import(${JSON.stringify(index)});
      const controller = new AbortController(); setTimeout(() => controller.abort(), 1000);
      try { await getToken({ signal: controller.signal }); console.log('token'); } catch (error) { console.log(error.code); }`;
    const { spawn } = await import('node:child_process');
    const { cleanEnv } = await import('../support/cli.js');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: cleanEnv(env) });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<void>((done) => child.on('close', () => done()));
    await exited;
    expect(out.trim()).toBe('interrupted');
    const after = (readConfig(configDir) as Json).profiles.default.token as Json;
    expect(after.access_token).not.toBe(before.access_token);
    await expectNothingLive(doorkeeper, gate, env);
  }, 60_000);
});
