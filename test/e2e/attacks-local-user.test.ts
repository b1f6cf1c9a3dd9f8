/**
 * Attacks by another local user (issue 31: B2, N21, N6/N22, N1, N7): a process of another uid (the
 * test, as root, spawns it as `nobody`) reads the browser's argv from /proc and races the login, or
 * floods mmauth's loopback listeners, or calls the API through another user's `mmauth proxy`. Every case is the attack tried again: it must fail.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';

import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanEnv, makeConfigDir, makeScratchDir, startCli } from '../support/cli.js';
import { signalPid } from '../support/signal.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { signIn, startProxy } from '../support/proxy.js';

const ATTACKER = resolve(import.meta.dirname, '../support/attacker/other-user.mjs');
const LATE_BROWSER = resolve(import.meta.dirname, '../support/attacker/late-browser.cjs');
/** `nobody` on Debian: another user than the one running the suite. */
const OTHER_UID = 65534;
/** Spawning as another uid needs root, as CI and these machines run the suite. */
const isRoot = process.getuid?.() === 0;

/** A folder every user can read (the other user reads the browser's pid file from it). */
const sharedDir = () => makeScratchDir('mmauth-local-user-', 0o755);

/** Runs the attacker as OTHER_UID; resolves with its JSON line (bounded: 20 s). */
function attackAsOtherUser(pidFile: string): Promise<Record<string, any>> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [ATTACKER, pidFile], { uid: OTHER_UID, gid: OTHER_UID, env: {} });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        resolvePromise(JSON.parse(out) as Record<string, any>);
      } catch {
        reject(new Error(`the attacker printed no result (exit ${code ?? signal}): ${out} ${err}`));
      }
    });
  });
}

/**
 * Another user's connection churn against `port` (attack P20): 500 connections at a time, each
 * reopened as it closes, beside 1,000 idle connections to a server of its own that swell the
 * kernel's socket table; from 0.5 s after the start until `stop()` (or 60 s), which resolves with
 * how many connections it opened.
 */
function startChurn(port: number): { stop(): Promise<number> } {
  const churn = `const net = require('node:net'); let opened = 0; const idle = [];
    process.on('SIGTERM', () => { console.log(opened); process.exit(0); });
    setTimeout(() => process.exit(1), 60000);
    const own = net.createServer((s) => idle.push(s)).listen(0, '127.0.0.1', () => {
      for (let i = 0; i < 1000; i++) idle.push(net.connect(own.address().port, '127.0.0.1').on('error', () => {}));
      const one = () => { opened++; const s = net.connect(${port}, '127.0.0.1'); s.on('error', () => {}); s.on('close', one); };
      setTimeout(() => { for (let i = 0; i < 500; i++) one(); }, 500);
    });`;
  const child = spawn(process.execPath, ['-e', churn], { uid: OTHER_UID, gid: OTHER_UID, env: {}, cwd: '/' });
  let opened = '';
  child.stdout.on('data', (chunk: Buffer) => (opened += chunk.toString()));
  const done = new Promise<void>((resolvePromise) => child.on('close', () => resolvePromise()));
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await done;
      return Number(opened.trim());
    },
  };
}

describe.runIf(isRoot)('another local user (run as root: the attacker is uid 65534)', () => {
  it.each([300, 2_000])(
    'B2/N21: the other user reads the start address from the browser argv and races it (browser starts after %i ms): refused before a byte is read; the genuine login completes',
    async (delayMs) => {
      const emulator = await startTestEmulator({ autoApprove: true });
      const configDir = makeConfigDir();
      const dir = sharedDir();
      const pidFile = join(dir, 'browser.pid');
      const login = startCli(['login', '--wait', '20', '--scope', 'service'], {
        env: emulator.env(configDir, {
          BROWSER: `${process.execPath} ${LATE_BROWSER}`,
          PID_FILE: pidFile,
          DELAY_MS: String(delayMs),
          MMAUTH_CREDENTIAL_STORE: 'file',
        }),
        timeoutMs: 30_000,
      });
      const attack = await attackAsOtherUser(pidFile);
      expect(attack.uid).toBe(OTHER_UID);
      expect(attack.startAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\/[0-9a-f]{32}$/);
      // The connection is closed unanswered: no state, no challenge, no cookie; no callback delivered.
      expect(attack.start).toEqual({ error: expect.any(String) });
      expect(attack.delivered).toEqual({ error: expect.any(String) });
      expect(attack.held).toBe(0);
      const result = await login.done;
      expect(result.code, result.stderr).toBe(0);
      const stored = readConfig(configDir) as { profiles: { default: { token: { access_token: string } } } };
      const info = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
        headers: { authorization: `Bearer ${stored.profiles.default.token.access_token}` },
      });
      expect(((await info.json()) as { resource_owner_id: number }).resource_owner_id).toBe(42);
      expect(emulator.requests.filter((request) => request.url === '/oauth2/token')).toHaveLength(1);
    },
    40_000,
  );

  it("N6: exec's token endpoint closes another user's connections unread; the child's requests still answer", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    const setup = startCli(['client-credentials'], { env });
    expect((await setup.done).code).toBe(0);
    const script = `process.stdout.write(process.env.MMAUTH_TOKEN_URL + '\\n'); setTimeout(async () => {
      const r = await fetch(process.env.MMAUTH_TOKEN_URL, { headers: { authorization: 'Bearer ' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION } });
      process.stdout.write(String(r.status) + '\\n');
    }, 6000);`;
    const exec = startCli(['exec', '--serve', '--', process.execPath, '-e', script], { env, timeoutMs: 20_000 });
    const [url] = await exec.waitForStdout(/http:\/\/127\.0\.0\.1:\d+\/token/);
    const port = Number(new URL(url).port);
    // 300 idle connections from the other user: each is closed by the endpoint as it is accepted
    // (without the peer check an idle connection is held until Node's 30 s connection check).
    const flood = `const net = require('node:net'); let closed = 0; const n = 300;
      for (let i = 0; i < n; i++) { const s = net.connect(${port}, '127.0.0.1'); s.on('close', () => { if (++closed === n) console.log(closed); }); s.on('error', () => {}); }
      setTimeout(() => { console.log(closed); process.exit(0); }, 10000);`;
    const closed = await new Promise<string>((resolvePromise) => {
      const child = spawn(process.execPath, ['-e', flood], { uid: OTHER_UID, gid: OTHER_UID, env: {} });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', () => resolvePromise(out.trim().split('\n')[0] ?? ''));
    });
    expect(Number(closed)).toBe(300);
    const result = await exec.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('200');
  }, 30_000);

  it("P20: another user's connection churn (500 connections at a time, reopened as they close, beside 1,000 idle connections of its own that swell the kernel's socket table) takes no slot or turn of the owner's: each of the owner's 30 requests answers 200 within 5 s", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { url, port } = await startProxy((await signIn(emulator)).env);
    const churn = startChurn(port);
    await sleep(1500);
    const answers: { status: number; ms: number }[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      // A new connection each time (no agent): each must be judged and served while the churn goes on.
      const status = await new Promise<number>((resolvePromise) => {
        const req = get(`${url}/api/me`, { agent: false, timeout: 15_000 }, (res) => {
          res.resume();
          resolvePromise(res.statusCode ?? 0);
        });
        req.on('error', () => resolvePromise(0));
        req.on('timeout', () => req.destroy());
      });
      answers.push({ status, ms: Math.round(performance.now() - started) });
      if (status !== 200 || answers.at(-1)!.ms >= 5_000) break;
    }
    expect(await churn.stop()).toBeGreaterThan(500);
    // What must hold is a wait of a read or two of the kernel's table, whatever the other user opens:
    // tens of ms on a quiet machine, under 1 s on a loaded one. Before, the owner's connection
    // queued behind every one of the other user's, each judged by a read of its own: 5–15 s.
    const slowest = Math.max(...answers.map(({ ms }) => ms));
    expect(slowest, JSON.stringify(answers.map(({ ms }) => ms))).toBeLessThan(5_000);
    expect(answers.map(({ status }) => status)).toEqual(Array.from({ length: 30 }, () => 200));
  }, 90_000);

  it("descriptors: another user's flood (4,000 connections held, each re-opened as it is closed) against a proxy whose descriptor limit is 1,024: the owner's requests still answer, and the proxy never holds more than its cap", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await signIn(emulator);
    const proxy = spawn('prlimit', ['--nofile=1024:1024', process.execPath, BIN, 'proxy', '--json'], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void proxy.kill('SIGKILL'));
    let out = '';
    proxy.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    for (let i = 0; i < 200 && !out.includes('\n'); i++) await sleep(50);
    const { url } = JSON.parse(out.split('\n')[0] ?? '{}') as { url: string };
    const port = Number(new URL(url).port);
    let mostHeld = 0;
    const sampler = setInterval(() => {
      try {
        mostHeld = Math.max(mostHeld, readdirSync(`/proc/${proxy.pid}/fd`).length);
      } catch {
        // Between two reads of a changing directory: the next sample counts.
      }
    }, 10);
    onTestFinished(() => clearInterval(sampler));
    const flood = `const net = require('node:net'); let opened = 0;
      process.on('SIGTERM', () => { console.log(opened); process.exit(0); });
      setTimeout(() => process.exit(1), 60000);
      const one = () => { opened++; const s = net.connect(${port}, '127.0.0.1'); s.on('error', () => {}); s.on('close', () => setImmediate(one)); };
      for (let i = 0; i < 4000; i++) one();`;
    const attacker = spawn(process.execPath, ['-e', flood], { uid: OTHER_UID, gid: OTHER_UID, env: {}, cwd: '/' });
    onTestFinished(() => void attacker.kill('SIGKILL'));
    let opened = '';
    attacker.stdout.on('data', (chunk: Buffer) => (opened += chunk.toString()));
    await sleep(1_500);
    const statuses: Array<number | string> = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        // 15 s each: with the flood filling the listen queue, a connection's SYN may be dropped and
        // sent again after 1, 3 and 7 s on a loaded machine; an answer is what must come.
        await new Promise<number | string>((done) => {
          const req = get(`${url}/api/me`, { agent: false, timeout: 15_000 }, (res) => {
            res.resume();
            done(res.statusCode ?? 0);
          });
          req.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
          req.on('timeout', () => (done('no answer in 15 s'), req.destroy()));
        }),
      );
    }
    attacker.kill('SIGTERM');
    await new Promise((done) => attacker.once('close', done));
    clearInterval(sampler);
    expect(Number(opened.trim())).toBeGreaterThan(4_000);
    expect(statuses).toEqual(Array.from({ length: 10 }, () => 200));
    // The cap: an eighth of the limit waiting (twice, with a batch being judged), 64 held per
    // listener, and the process's own descriptors; never near the limit, where accept fails.
    expect(mostHeld).toBeLessThan(512);
  }, 240_000);

  it("P20: the same churn against exec's token endpoint: each of the child's 30 requests for the token answers 200 within 5 s", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await startCli(['client-credentials'], { env }).done).code).toBe(0);
    // The child waits for the churn, then asks for the token 30 times, each on a new connection.
    const script = `const { get } = require('node:http');
      process.stdout.write(process.env.MMAUTH_TOKEN_URL + '\\n');
      const one = () => new Promise((resolve) => {
        const started = performance.now();
        const req = get(process.env.MMAUTH_TOKEN_URL, { agent: false, timeout: 15000, headers: { authorization: 'Bearer ' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, ms: Math.round(performance.now() - started) }));
        });
        req.on('error', () => resolve({ status: 0, ms: Math.round(performance.now() - started) }));
        req.on('timeout', () => req.destroy());
      });
      setTimeout(async () => {
        const answers = [];
        for (let i = 0; i < 30; i++) { answers.push(await one()); if (answers.at(-1).status !== 200 || answers.at(-1).ms >= 5000) break; }
        process.stdout.write(JSON.stringify(answers) + '\\n');
      }, 1500);`;
    const exec = startCli(['exec', '--serve', '--', process.execPath, '-e', script], { env, timeoutMs: 60_000 });
    const [url] = await exec.waitForStdout(/http:\/\/127\.0\.0\.1:\d+\/token/);
    const churn = startChurn(Number(new URL(url).port));
    const result = await exec.done;
    expect(await churn.stop()).toBeGreaterThan(500);
    expect(result.code, result.stderr).toBe(0);
    const answers = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '[]') as { status: number; ms: number }[];
    expect(Math.max(...answers.map(({ ms }) => ms)), JSON.stringify(answers.map(({ ms }) => ms))).toBeLessThan(5_000);
    expect(answers.map(({ status }) => status)).toEqual(Array.from({ length: 30 }, () => 200));
  }, 90_000);

  it("P25: another user's request sent and its connection closed before the verdict (its end of the connection then shows uid 0, inode 0 in the table) never reaches the service, though nobody would read the answer", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { url, port } = await startProxy((await signIn(emulator)).env);
    const before = emulator.requests.length;
    const attempt = `const net = require('node:net'); let closed = 0;
      for (let i = 0; i < 50; i++) {
        // Written, then closed at once: the client's end is orphaned, and the table lists it as time-wait.
        const s = net.connect(${port}, '127.0.0.1', () => s.write('GET /api/me HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n', () => s.destroy()));
        s.on('error', () => {});
        s.on('close', () => { if (++closed === 50) process.exit(0); });
      }
      setTimeout(() => process.exit(0), 5000);`;
    await new Promise<void>((resolvePromise) => {
      const child = spawn(process.execPath, ['-e', attempt], { uid: OTHER_UID, gid: OTHER_UID, env: {}, cwd: '/' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', () => (clearTimeout(timer), resolvePromise()));
    });
    await sleep(500);
    expect(emulator.requests.slice(before)).toEqual([]);
    expect((await fetch(`${url}/api/me`)).status).toBe(200);
  }, 30_000);

  it("P5: another user's request to `mmauth proxy` is closed unanswered: the service gets nothing, the owner's requests still answer", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { url, port } = await startProxy((await signIn(emulator)).env);
    const before = emulator.requests.length;
    // A raw request (no client library between): what comes back before the proxy closes, if anything.
    const attempt = `const s = require('node:net').connect(${port}, '127.0.0.1', () => s.write('GET /api/me HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n'));
      s.on('data', (d) => { console.log('answered ' + String(d).split('\\r\\n')[0]); process.exit(0); });
      s.on('error', () => {});
      s.on('close', () => { console.log('closed unanswered'); process.exit(0); });
      setTimeout(() => { console.log('no answer, still open'); process.exit(0); }, 5000);`;
    const answer = await new Promise<string>((resolvePromise) => {
      const child = spawn(process.execPath, ['-e', attempt], { uid: OTHER_UID, gid: OTHER_UID, env: {}, cwd: '/' });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', () => {
        clearTimeout(timer);
        resolvePromise(out.trim());
      });
    });
    expect(answer).toBe('closed unanswered');
    expect(emulator.requests.length).toBe(before);
    expect((await fetch(`${url}/api/me`)).status).toBe(200);
  }, 30_000);
});

describe('signals (N1, N9)', () => {
  it("N1: SIGUSR1 (from exec's child, or anyone of the user) opens no inspector in mmauth, and is not passed to the child", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await startCli(['client-credentials'], { env }).done).code).toBe(0);
    // The child runs once mmauth is set up (its launcher's SIGUSR1 listener first of all): the signal
    // comes when the child could send it, never in the first milliseconds of Node's own start-up.
    const exec = startCli(['exec', '--', process.execPath, '-e', "console.log('ready'); setTimeout(() => {}, 1500)"], {
      env,
    });
    await exec.waitForStdout(/ready/);
    signalPid(exec.child.pid, 'SIGUSR1');
    await sleep(300);
    const isOpen = await new Promise<boolean>((resolvePromise) => {
      const socket = connect(9229, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolvePromise(true)));
      socket.once('error', () => resolvePromise(false));
    });
    const result = await exec.done;
    expect(isOpen).toBe(false);
    expect(result.stderr).not.toContain('Debugger listening');
    expect(result.code).toBe(0);
  });

  it.each(['SIGUSR2', 'SIGALRM', 'SIGVTALRM'] as const)(
    'N9: %s reaches the child and exec cleans up: exit 128 + n, the private directory removed',
    async (signal) => {
      const emulator = await startTestEmulator();
      const configDir = makeConfigDir();
      const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
      expect((await startCli(['client-credentials'], { env }).done).code).toBe(0);
      const exec = startCli(
        [
          'exec',
          '--',
          process.execPath,
          '-e',
          "console.error('dir=' + process.env.MMAUTH_TOKEN_FILE); setInterval(() => {}, 1000)",
        ],
        { env, timeoutMs: 20_000 },
      );
      const [, file] = await exec.waitForStderr(/dir=(\S+)/);
      signalPid(exec.child.pid, signal);
      const result = await exec.done;
      const { constants } = await import('node:os');
      expect(result.code).toBe(128 + constants.signals[signal]);
      expect(() => readFileSync(file ?? '')).toThrow();
    },
  );
});

describe('N7: an orphaned child', () => {
  it('the endpoint also listens on a Unix socket in the private directory; after kill -9 of exec the child is ended and the directory removed', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await startCli(['client-credentials'], { env }).done).code).toBe(0);
    const script = `const http = require('node:http');
      http.get({ socketPath: process.env.MMAUTH_TOKEN_SOCKET, path: '/token', headers: { authorization: 'Bearer ' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION } }, (res) => {
        console.log(JSON.stringify({ pid: process.pid, status: res.statusCode, socket: process.env.MMAUTH_TOKEN_SOCKET }));
      });
      setInterval(() => {}, 1000);`;
    const exec = startCli(['exec', '--serve', '--', process.execPath, '-e', script], { env, timeoutMs: 20_000 });
    const [line] = await exec.waitForStdout(/\{.*"status".*\}/);
    const seen = JSON.parse(line) as { pid: number; status: number; socket: string };
    expect(seen.status).toBe(200);
    const { statSync, existsSync } = await import('node:fs');
    const { dirname } = await import('node:path');
    expect(statSync(dirname(seen.socket)).mode & 0o777).toBe(0o700);
    // The watchdog starts once the child has run 200 ms (a short child never pays for it).
    await sleep(400);
    signalPid(exec.child.pid, 'SIGKILL');
    let isAlive = true;
    for (let i = 0; i < 50 && isAlive; i++) {
      await sleep(100);
      try {
        signalPid(seen.pid, 0);
      } catch {
        isAlive = false;
      }
    }
    expect(isAlive).toBe(false);
    expect(existsSync(dirname(seen.socket))).toBe(false);
  });
});
