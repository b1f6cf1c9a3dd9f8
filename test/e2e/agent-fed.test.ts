/**
 * Runners fed by the agent recover (decision 50 and the newcomer's fleets): against a real
 * Doorkeeper 5.5 that revokes a client's previous token on each new one
 * (`revoke_previous_client_credentials_token`), another runner's sign-in ends the agent's token;
 * once the agent has renewed, an agent-fed `exec`'s token file and `--serve` endpoint hold the
 * renewed token within a second; a child that meets a 401 tells `--serve` (`POST /token/refused`)
 * and gets a live token; `token --verify` and `status --check` through the agent really ask the
 * server; `doctor` with only MMAUTH_AGENT_SOCK checks the agent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { farSideEnv, startAgent } from '../support/agent.js';
import { makeConfigDir, makeScratchDir, runCli, startCli } from '../support/cli.js';
import { startDoorkeeper, type TestDoorkeeper } from '../support/doorkeeper.js';

type Json = Record<string, any>;

/** Doorkeeper revoking a client's previous token, a `ci` profile signed in with client credentials, the agent serving it. */
async function agentOnRevokingServer() {
  const doorkeeper = await startDoorkeeper({ revokePreviousClientCredentialsToken: true });
  const configDir = makeConfigDir();
  const signIn = await runCli(['client-credentials', '--profile', 'ci'], {
    env: doorkeeper.env(configDir),
    timeoutMs: 30_000,
  });
  expect(signIn.code, signIn.stderr).toBe(0);
  const { socket } = await startAgent(
    { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: doorkeeper.clientSecret, MMAUTH_CREDENTIAL_STORE: 'file' },
    ['--profile', 'ci'],
  );
  return { doorkeeper, socket, far: farSideEnv(socket) };
}

/** Another runner sharing the client signs in: the server ends every earlier token of the client. */
async function anotherRunnerSignsIn(doorkeeper: TestDoorkeeper): Promise<void> {
  const other = await runCli(['client-credentials'], { env: doorkeeper.env(makeConfigDir()), timeoutMs: 30_000 });
  expect(other.code, other.stderr).toBe(0);
}

/** Whether the server holds `token` live now. */
async function isLive(doorkeeper: TestDoorkeeper, token: string): Promise<boolean> {
  const record = (await doorkeeper.tokens()).find((candidate) => candidate.token === token);
  return record !== undefined && !record.revoked && !record.expired;
}

/** The agent's current token, as a far-side `mmauth token` gets it. */
async function agentToken(far: Record<string, string>): Promise<string> {
  const run = await runCli(['token'], { env: far });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe('runners fed by the agent', () => {
  it("an agent-fed exec's file and --serve endpoint hold the agent's renewed token within a second of the renewal", async () => {
    const { doorkeeper, far } = await agentOnRevokingServer();
    const stopFile = join(makeScratchDir(), 'stop');
    // Every 50 ms: the time, the file's token, the endpoint's token.
    const script = `const fs = require('node:fs');
      const tick = async () => {
        if (fs.existsSync(${JSON.stringify(stopFile)})) process.exit(0);
        const file = fs.readFileSync(process.env.MMAUTH_TOKEN_FILE, 'utf8').trim();
        const answer = await fetch(process.env.MMAUTH_TOKEN_URL, { headers: { authorization: 'Bearer ' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION } });
        const served = (await answer.json()).access_token;
        console.log(JSON.stringify([Date.now(), file, served]));
        setTimeout(tick, 50);
      };
      tick();`;
    const exec = startCli(['exec', '--serve', '--', process.execPath, '-e', script], { env: far, timeoutMs: 90_000 });
    await exec.waitForStdout(/^\[\d+,/m, 20_000);
    const first = await agentToken(far);
    await anotherRunnerSignsIn(doorkeeper);
    expect(await isLive(doorkeeper, first)).toBe(false);
    // A client of the agent meets the 401 and tells the agent, which renews (and replays).
    const api = await runCli(['api', '/api/me'], { env: far, timeoutMs: 30_000 });
    expect(api.code, api.stderr).toBe(0);
    const renewedAt = Date.now();
    const renewed = await agentToken(far);
    expect(renewed).not.toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    writeFileSync(stopFile, '');
    const result = await exec.done;
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as [number, string, string]);
    const later = rows.filter(([atMs]) => atMs > renewedAt + 1_000);
    expect(later.length).toBeGreaterThan(5);
    expect(later.filter(([, file, served]) => file !== renewed || served !== renewed)).toEqual([]);
    expect(rows[0]?.[1]).toBe(first);
  }, 150_000);

  it('a child that meets a 401 tells --serve (POST /token/refused) and gets a token the server accepts', async () => {
    const { doorkeeper, far } = await agentOnRevokingServer();
    const goFile = join(makeScratchDir(), 'go');
    const script = `const fs = require('node:fs');
      const ask = (path, init = {}) => fetch(process.env.MMAUTH_TOKEN_URL + path, { ...init, headers: { ...init.headers, authorization: 'Bearer ' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION } }).then((r) => r.json());
      const me = (token) => fetch(process.env.API_ME, { headers: { authorization: 'Bearer ' + token } }).then((r) => r.status);
      const wait = () => new Promise((r) => setTimeout(r, 50));
      (async () => {
        console.log('ready');
        while (!fs.existsSync(${JSON.stringify(goFile)})) await wait();
        const held = (await ask('')).access_token;
        const before = await me(held);
        const next = (await ask('/refused', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_token: held }) })).access_token;
        console.log(JSON.stringify({ before, after: await me(next), changed: next !== held }));
      })();`;
    const exec = startCli(['exec', '--serve', '--', process.execPath, '-e', script], {
      env: { ...far, API_ME: `${doorkeeper.baseUrl}/api/me` },
      timeoutMs: 60_000,
    });
    await exec.waitForStdout(/^ready$/m, 20_000);
    await anotherRunnerSignsIn(doorkeeper);
    // Before the agent polls anything new: the endpoint still serves the ended token.
    writeFileSync(goFile, '');
    const result = await exec.done;
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Json;
    expect(report).toEqual({ before: 401, after: 200, changed: true });
  }, 120_000);

  it('token --verify and status --check through the agent ask the server: a token it ended is renewed, never handed out', async () => {
    const { doorkeeper, far } = await agentOnRevokingServer();
    const first = await agentToken(far);
    await anotherRunnerSignsIn(doorkeeper);
    const verified = await runCli(['token', '--verify'], { env: far, timeoutMs: 30_000 });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout.trim()).not.toBe(first);
    expect(await isLive(doorkeeper, verified.stdout.trim())).toBe(true);
    await anotherRunnerSignsIn(doorkeeper);
    const status = await runCli(['status', '--check', '--json'], { env: far, timeoutMs: 30_000 });
    expect(status.code, status.stderr).toBe(0);
    const row = (JSON.parse(status.stdout) as Json).agent.profiles[0] as Json;
    expect(row).toMatchObject({ name: 'ci', check: 'active', error: null });
    expect(await isLive(doorkeeper, await agentToken(far))).toBe(true);
  }, 120_000);

  it('doctor with only MMAUTH_AGENT_SOCK passes for a working agent and fails naming the agent for a dead one', async () => {
    const { far, socket } = await agentOnRevokingServer();
    const working = await runCli(['doctor', '--json'], { env: far, timeoutMs: 30_000 });
    expect(working.code, working.stdout + working.stderr).toBe(0);
    const checks = (JSON.parse(working.stdout) as Json).checks as Json[];
    expect(checks.find((check) => check.name === 'agent')).toMatchObject({ status: 'ok' });
    expect(checks.find((check) => check.name === 'agent token')).toMatchObject({ status: 'ok' });
    expect((await runCli(['agent', '--stop'], { env: far, timeoutMs: 30_000 })).code).toBe(0);
    const dead = await runCli(['doctor', '--json'], { env: far, timeoutMs: 30_000 });
    expect(dead.code).toBe(1);
    const failed = ((JSON.parse(dead.stdout) as Json).checks as Json[]).filter((check) => check.status === 'fail');
    expect(failed.map((check) => check.name)).toEqual(['agent']);
    expect(failed[0]?.detail).toContain(socket);
  }, 120_000);
});
