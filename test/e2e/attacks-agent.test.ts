/**
 * The agent's trust in its socket and its renewals (attacks A5, A6, A1, A10): a socket another user
 * bound (directly, or where ssh -R was to put one), a --stop whose pid came over a socket, an agent
 * directory another user took first, and clients that ask for renewals. Each tried again with the
 * spawned binary; the attacker is uid 65534 where another user is needed (root runs the suite).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, agentSocketPath, doorkeeperAgent, farSideEnv, hostProfiles, startAgent } from '../support/agent.js';
import { makeScratchDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { signalPid } from '../support/signal.js';
import { runCommand } from '../support/run-command.js';
import { refreshGrants, startTestEmulator } from '../support/emulator.js';
import { overSsh, startTestSshd } from '../support/sshd.js';

const FAKE_AGENT = resolve(import.meta.dirname, '../support/attacker/fake-agent.mjs');
/** `nobody` on Debian: another user than the one running the suite. */
const OTHER_UID = 65534;
const isRoot = process.getuid?.() === 0;

/** A directory every user may write, with the sticky bit (as /tmp), removed when the test ends. */
function stickyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-sticky-'));
  chmodSync(dir, 0o1777);
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return dir;
}

/** A recording HTTP server on 127.0.0.1 (the squatter's "service"): every request it got. */
async function startRecorder(): Promise<{ baseUrl: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  onTestFinished(() => void server.close());
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Runs the fake agent on `socketPath` (as `uid` when given); resolves once it listens, with the requests it logs. */
async function startFakeAgent(
  socketPath: string,
  baseUrl: string,
  pid: number,
  uid?: number,
): Promise<{ child: ChildProcess; requests: () => string[] }> {
  const child = spawn(process.execPath, [FAKE_AGENT, socketPath, baseUrl, String(pid)], {
    ...(uid === undefined ? {} : { uid, gid: uid }),
    env: {},
    cwd: '/',
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the fake agent did not listen within 10 s: ${out}`)), 10_000);
    child.stdout?.on('data', () => {
      if (out.includes('listening')) {
        clearTimeout(timer);
        done();
      }
    });
  });
  return { child, requests: () => out.split('\n').filter((line) => line.startsWith('request ')) };
}

/** `count` requests to the agent at once, over its socket; resolves with each HTTP status. */
function askAgentAtOnce(socketPath: string, path: string, count: number): Promise<number[]> {
  const one = () =>
    new Promise<number>((done, fail) => {
      const req = request({ socketPath, path, timeout: 30_000 }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      });
      req.on('error', fail);
      req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
      req.end();
    });
  return Promise.all(Array.from({ length: count }, one));
}

describe.runIf(isRoot)('A5: a socket another user bound (the attacker is uid 65534)', () => {
  it('in a sticky directory, its token and server are refused: token and api -X POST exit 3 (agent_untrusted), the squatter and its server receive nothing', async () => {
    const dir = stickyDir();
    const recorder = await startRecorder();
    const socket = join(dir, 'mmauth-me.sock');
    const fake = await startFakeAgent(socket, recorder.baseUrl, 1, OTHER_UID);
    const env = farSideEnv(socket);
    const plan = join(env.HOME ?? '', 'plan.txt');
    writeFileSync(plan, 'the secret plan');
    const token = await runCli(['token', '--json'], { env });
    expect(token.code, token.stderr).toBe(3);
    expect(token.stdout).toMatch(/"code": ?"agent_untrusted"/);
    expect(token.stdout).toContain(socket);
    expect(token.stdout).toContain('uid 65534');
    expect(token.stdout).not.toContain('squatters-token');
    const api = await runCli(['api', '-X', 'POST', '/api/notes', '-d', `@${plan}`], { env });
    expect(api.code, api.stderr).toBe(3);
    expect(api.stderr).toContain('error: not using the agent socket');
    expect(api.stderr).toMatch(/private directory/);
    expect(fake.requests()).toEqual([]);
    expect(recorder.seen).toEqual([]);
  });

  it('control: the same socket bound by this user in the same sticky directory is used, as a forwarded one must be', async () => {
    const dir = stickyDir();
    const recorder = await startRecorder();
    const socket = join(dir, 'mmauth-me.sock');
    const fake = await startFakeAgent(socket, recorder.baseUrl, 1);
    const result = await runCli(['token'], { env: farSideEnv(socket) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('squatters-token');
    expect(fake.requests()).toHaveLength(1);
  });

  it("an agent that names another server than this side's setting (MMAUTH_BASE_URL, or a local profile of the same name) is refused: exit 3, nothing sent to that server", async () => {
    const recorder = await startRecorder();
    const socket = agentSocketPath();
    await startFakeAgent(socket, recorder.baseUrl, 1);
    const env = farSideEnv(socket);
    const byVariable = await runCli(['api', '/api/me'], { env: { ...env, MMAUTH_BASE_URL: 'http://127.0.0.1:9' } });
    expect(byVariable.code, byVariable.stderr).toBe(3);
    expect(byVariable.stderr).toContain('but this side names http://127.0.0.1:9 for it');
    const configDir = env.MMAUTH_CONFIG_DIR ?? '';
    const profile = { base_url: 'http://127.0.0.1:9', client_id: 'x' };
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles: { work: profile } }), { mode: 0o600 });
    const byProfile = await runCli(['token', '--json'], { env });
    expect(byProfile.code, byProfile.stderr).toBe(3);
    expect(byProfile.stdout).toMatch(/"code": ?"agent_untrusted"/);
    expect(recorder.seen).toEqual([]);
  });

  it('a directory another user owns, even with a socket of this user in it, is refused', async () => {
    const dir = stickyDir();
    const theirs = join(dir, 'theirs');
    mkdirSync(theirs, { mode: 0o777 });
    chmodSync(theirs, 0o777);
    const recorder = await startRecorder();
    const socket = join(theirs, 'agent.sock');
    const fake = await startFakeAgent(socket, recorder.baseUrl, 1);
    // The attacker could have put it there: the directory is not this user's.
    const { chownSync } = await import('node:fs');
    chownSync(theirs, OTHER_UID, OTHER_UID);
    const result = await runCli(['token', '--json'], { env: farSideEnv(socket) });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/"code": ?"agent_untrusted"/);
    expect(fake.requests()).toEqual([]);
  });

  it('over a real sshd: the path ssh -R was to bind is taken (the forward fails); on the far side token and api exit 3, nothing reaches the squatter', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const sshd = await startTestSshd({ bindUnlink: false });
    const far = stickyDir();
    const remote = join(far, 'mmauth-me.sock');
    const recorder = await startRecorder();
    const fake = await startFakeAgent(remote, recorder.baseUrl, 1, OTHER_UID);
    const home = makeScratchDir('mmauth-far-home-');
    onTestFinished(() => rmSync(home, REMOVE_TREE));
    writeFileSync(join(home, 'plan.txt'), 'the secret plan');
    const mmauth = `${process.execPath} ${BIN}`;
    const result = await overSsh(
      sshd,
      `${remote}:${socket}`,
      `export HOME=${home} MMAUTH_CONFIG_DIR=${home}/config MMAUTH_AGENT_SOCK=${remote}; ` +
        `${mmauth} token; echo "token-exit-$?"; ${mmauth} api -X POST /api/notes -d @${home}/plan.txt; echo "api-exit-$?"`,
    );
    // ssh's own warning is below LogLevel=ERROR here; the squatter's line shows the forward failed.
    expect(result.stdout).toContain('token-exit-3');
    expect(result.stdout).toContain('api-exit-3');
    expect(result.stdout).not.toContain('squatters-token');
    expect(result.stderr).toContain('belongs to nobody (uid 65534)');
    expect(fake.requests()).toEqual([]);
    expect(recorder.seen).toEqual([]);
  }, 60_000);

  it("a link another user flips between this user's agent and theirs after the trust check: no request reaches theirs (the location judged is the one connected to)", async () => {
    const recorder = await startRecorder();
    const mine = agentSocketPath();
    const own = await startFakeAgent(mine, recorder.baseUrl, 1);
    // The attacker's own directory, its socket in it, and the link it flips there as fast as it can.
    const theirs = mkdtempSync(join(tmpdir(), 'mmauth-theirs-'));
    onTestFinished(() => rmSync(theirs, REMOVE_TREE));
    const { chownSync } = await import('node:fs');
    chownSync(theirs, OTHER_UID, OTHER_UID);
    chmodSync(theirs, 0o755);
    const squatter = await startFakeAgent(join(theirs, 'evil.sock'), recorder.baseUrl, 1, OTHER_UID);
    const flip = `const fs = require('node:fs'); const [dir, a, b] = process.argv.slice(1);
      for (let i = 0; ; i++) { const next = dir + '/l' + (i % 2); try { fs.unlinkSync(next); } catch {}
        fs.symlinkSync(i % 2 ? a : b, next); fs.renameSync(next, dir + '/agent.sock'); }`;
    const flipper = spawn(process.execPath, ['-e', flip, theirs, mine, join(theirs, 'evil.sock')], {
      uid: OTHER_UID,
      gid: OTHER_UID,
      env: {},
      cwd: '/',
    });
    onTestFinished(() => void flipper.kill('SIGKILL'));
    const link = join(theirs, 'agent.sock');
    const until = Date.now() + 10_000;
    while (!existsSync(link) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const exits: Array<number | null> = [];
    for (let run = 0; run < 40; run++) exits.push((await runCli(['token'], { env: farSideEnv(link) })).code);
    flipper.kill('SIGKILL');
    // Each run used this user's agent (exit 0) or judged the attacker's and sent it nothing (exit 3).
    expect(exits.every((code) => code === 0 || code === 3)).toBe(true);
    expect(exits.filter((code) => code === 0).length).toBeGreaterThan(0);
    expect(squatter.requests()).toEqual([]);
    expect(own.requests().length).toBe(exits.filter((code) => code === 0).length);
  }, 120_000);

  it("A1: with XDG_RUNTIME_DIR unset and the temporary directory's mmauth-agent-UID taken first by another user, the agent starts, and a second start finds it", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const shared = stickyDir();
    const taken = join(shared, `mmauth-agent-${process.getuid?.() ?? 0}`);
    mkdirSync(taken, { mode: 0o755 });
    const { chownSync } = await import('node:fs');
    chownSync(taken, OTHER_UID, OTHER_UID);
    const agentEnv = { ...env, TMPDIR: shared, XDG_RUNTIME_DIR: '' };
    const first = await runCli(['agent', '--json', '--profile', 'work'], { env: agentEnv, timeoutMs: 30_000 });
    expect(first.code, first.stderr).toBe(0);
    const started = JSON.parse(first.stdout) as { socket: string; pid: number };
    onTestFinished(() => {
      signalPid(started.pid, 'SIGKILL', true);
    });
    expect(started.socket.startsWith(`${shared}/mmauth-agent-`)).toBe(true);
    expect(started.socket.startsWith(`${taken}/`)).toBe(false);
    expect(readFileSync(join(configDir, 'agent-socket'), 'utf8').trim()).toBe(started.socket);
    const second = await runCli(['agent', '--json', '--profile', 'work'], { env: agentEnv });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual(started);
    const token = await runCli(['token'], { env: farSideEnv(started.socket) });
    expect(token.code, token.stderr).toBe(0);
    const stop = await runCli(['agent', '--stop', '--json'], {
      env: { ...agentEnv, MMAUTH_AGENT_SOCK: started.socket },
    });
    expect(stop.code, stop.stderr).toBe(0);
    // The directory made for it goes with it (bounded: the agent removes it once it has stopped answering).
    const goneBy = Date.now() + 10_000;
    while (existsSync(dirname(started.socket)) && Date.now() < goneBy) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(dirname(started.socket))).toBe(false);
  }, 60_000);
});

describe('A6: --stop', () => {
  it("a socket of this user whose answer names an unrelated process's pid: --stop leaves that process running", async () => {
    const bystander = spawn('sleep', ['60']);
    onTestFinished(() => void bystander.kill('SIGKILL'));
    const recorder = await startRecorder();
    const socket = agentSocketPath();
    await startFakeAgent(socket, recorder.baseUrl, bystander.pid ?? 0);
    const result = await runCli(['agent', '--stop'], { env: { MMAUTH_AGENT_SOCK: socket }, timeoutMs: 20_000 });
    await new Promise((done) => setTimeout(done, 300));
    expect(bystander.exitCode, result.stderr).toBeNull();
    expect(bystander.signalCode).toBeNull();
    expect(result.stderr).toContain('still answers');
  });

  it.runIf(isRoot)(
    'the real agent is ended by --stop (eval form: the variables unset), also from a PID namespace of its own where its pid means nothing',
    async () => {
      const emulator = await startTestEmulator({ autoApprove: true });
      const { env } = await hostProfiles(emulator);
      for (const inNamespace of [false, true]) {
        const { agent, socket } = await startAgent(env);
        const stopArgs = ['agent', '--stop'];
        const stop = inNamespace
          ? await runCommand('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, BIN, ...stopArgs], {
              env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', MMAUTH_AGENT_SOCK: socket },
              timeoutMs: 20_000,
            })
          : await runCli(stopArgs, { env: { MMAUTH_AGENT_SOCK: socket } });
        expect(stop.code, stop.stderr).toBe(0);
        expect(stop.stdout).toContain('unset MMAUTH_AGENT_SOCK;');
        const ended = await agent.done;
        expect(ended.code, ended.stderr).toBe(0);
        expect(existsSync(socket)).toBe(false);
      }
    },
    60_000,
  );
});

describe('A10: renewals a client cannot force', () => {
  it('against a real Doorkeeper with 1-hour tokens, 20 socket requests with min_ttl=86400 make no token at the server; 20 with min_ttl=3600 at most one', async () => {
    const { doorkeeper, socket } = await doorkeeperAgent({ accessTokenExpiresInS: 3600 });
    const before = (await doorkeeper.tokens()).length;
    expect(before).toBe(1);
    const beyond = await askAgentAtOnce(socket, '/v1/token?min_ttl=86400', 20);
    expect(beyond.every((status) => status === 403)).toBe(true);
    expect((await doorkeeper.tokens()).length).toBe(before);
    await askAgentAtOnce(socket, '/v1/token?min_ttl=3600', 20);
    expect((await doorkeeper.tokens()).length - before).toBeLessThanOrEqual(1);
  }, 120_000);

  it('against 1-hour tokens, 20 socket requests with min_ttl=86400 (and 20 with min_ttl=3600) make at most one token at the server', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, tokenTtlS: 3600 });
    const { env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const before = refreshGrants(emulator);
    const beyond = await askAgentAtOnce(socket, '/v1/token?min_ttl=86400', 20);
    expect(beyond.every((status) => status === 403)).toBe(true);
    const whole = await askAgentAtOnce(socket, '/v1/token?min_ttl=3600', 20);
    expect(whole.every((status) => status === 403 || status === 200)).toBe(true);
    expect(refreshGrants(emulator) - before).toBeLessThanOrEqual(1);
    // What the agent says, through the CLI: the lifetime named, nothing renewed.
    const result = await runCli(['token', '--min-ttl', '86400', '--json'], { env: farSideEnv(socket) });
    expect(result.code).toBe(4);
    expect(result.stdout).toMatch(/"code": ?"token_lifetime_too_short"/);
    expect(result.stdout).toContain('3600 s');
    expect(refreshGrants(emulator) - before).toBeLessThanOrEqual(1);
  }, 60_000);
});
