/**
 * Device login (RFC 8628): `mmauth login --device` signs in from another device where the server
 * offers the device grant (by its metadata, or by a profile setting on its origin); a real Chromium
 * enters the code; the grant is stored, renewable and ended by logout. Polling follows the
 * interval, +5 s per `slow_down`; a denial, an expired code, an endpoint on another origin and
 * Ctrl-C each end as they should; `login` with no way to open a browser prefers the device grant
 * where it is offered; nothing but an explicit sign-in starts one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cleanEnv, makeConfigDir, runCli, startCli, type RunningCli } from '../support/cli.js';
import { openChromiumPage } from '../support/chromium-page.js';
import { readConfig, startTestEmulator, type TestEmulator } from '../support/emulator.js';
import { startDoorkeeper } from '../support/doorkeeper.js';
import QRCode from 'qrcode';

type Json = Record<string, any>;
const INDEX = resolve(import.meta.dirname, '../../dist/index.js');

/** An emulator offering the device grant in its metadata (doorkeeper6), polled every `intervalS`. */
function deviceEmulator(options: { intervalS?: number; lifetimeS?: number; autoApprove?: boolean } = {}) {
  return startTestEmulator({
    flavor: 'doorkeeper6',
    deviceIntervalS: options.intervalS ?? 1,
    deviceLifetimeS: options.lifetimeS ?? 600,
    autoApprove: options.autoApprove ?? false,
  });
}

/** The environment of a sign-in with no browser: no BROWSER, no display (cleanEnv drops DISPLAY). */
function signInEnv(emulator: TestEmulator, configDir: string, extra: Record<string, string> = {}) {
  return emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file', ...extra });
}

/** Waits for the code and the two addresses mmauth shows. */
async function shownCode(login: RunningCli) {
  const [, uri, code] = await login.waitForStderr(/Open (\S+) on any device and enter the code:\s+(\S+)/, 20_000);
  const [, complete] = await login.waitForStderr(/or open (\S+)/, 5_000);
  return { uri: uri ?? '', code: code ?? '', complete: complete ?? '' };
}

/** A person at a real browser: opens the verification page, types the code, approves. */
async function approveInChromium(uri: string, code: string): Promise<void> {
  const page = await openChromiumPage();
  await page.goto(uri);
  await page.fill('#user_code', code);
  await page.click('#approve');
  await page.waitForSelector('#result', { timeout: 10_000 });
}

/** The user's decision on the verification page, sent as its form does. */
async function decide(emulator: TestEmulator, code: string, decision: 'approve' | 'deny'): Promise<void> {
  const answer = await fetch(`${emulator.baseUrl}/oauth2/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user_code: code, decision }),
  });
  expect(await answer.text()).toContain(decision === 'approve' ? 'Device approved' : 'Device denied');
}

/**
 * A scripted server for the polling rules: its device endpoint answers interval 1 s; its token
 * endpoint answers the device-code polls from `answers` in turn (an OAuth error name, or `token`),
 * recording when each came.
 */
async function scriptedServer(answers: string[], options: { tokenDelayMs?: number } = {}) {
  const polls: number[] = [];
  /** The tokens revoked (RFC 7009 requests), in order. */
  const revoked: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const send = (status: number, json: Json) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(json));
      };
      if (req.url === '/device') {
        return send(200, {
          device_code: 'scripted-device-code',
          user_code: 'BCDF-GHJK',
          verification_uri: `http://127.0.0.1:${port}/verify`,
          expires_in: 600,
          interval: 1,
        });
      }
      if (req.url === '/oauth2/token' && new URLSearchParams(body).get('device_code') === 'scripted-device-code') {
        polls.push(Date.now());
        const answer = answers[polls.length - 1] ?? 'token';
        if (answer !== 'token') return send(400, { error: answer });
        const token = {
          access_token: 'scripted-access',
          refresh_token: 'scripted-refresh',
          token_type: 'bearer',
          expires_in: 3600,
        };
        setTimeout(() => send(200, token), options.tokenDelayMs ?? 0);
        return;
      }
      if (req.url === '/oauth2/revoke') {
        revoked.push(new URLSearchParams(body).get('token') ?? '');
        return send(200, {});
      }
      send(404, { error: 'not_found' });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  onTestFinished(() => void server.close());
  const port = (server.address() as AddressInfo).port;
  return { baseUrl: `http://127.0.0.1:${port}`, polls, revoked };
}

/** The environment of a sign-in at the scripted server (its public client `scripted`, the file store). */
function scriptedEnv(baseUrl: string, configDir: string): Record<string, string> {
  return {
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_BASE_URL: baseUrl,
    MMAUTH_CLIENT_ID: 'scripted',
    MMAUTH_CREDENTIAL_STORE: 'file',
  };
}

describe('mmauth login --device', () => {
  it('by the metadata: a real browser enters the code; the grant is stored, renews, and logout ends it on the server', async () => {
    const emulator = await deviceEmulator();
    const configDir = makeConfigDir();
    const env = signInEnv(emulator, configDir);
    const login = startCli(['login', '--device', '--json'], { env, timeoutMs: 60_000 });
    const shown = await shownCode(login);
    expect(login.stderr()).toContain('enter this code only for a sign-in you started yourself');
    await approveInChromium(shown.uri, shown.code);
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as Json;
    expect(document).toMatchObject({ grant: 'authorization_code', flow: 'device', profile: 'default' });
    // The device code is a secret of the run: never on the terminal.
    const deviceCode = emulator.requests
      .map((r) => new URLSearchParams(r.body).get('device_code'))
      .find((value) => value !== null);
    expect(deviceCode).toBeTruthy();
    expect(result.stderr + result.stdout).not.toContain(deviceCode);
    const stored = (readConfig(configDir) as Json).profiles.default.token as Json;
    expect(stored).toMatchObject({ device: true });
    expect(stored.refresh_token).toBeTruthy();
    const status = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as Json;
    expect(status.profiles[0]).toMatchObject({ flow: 'device', grant: 'authorization_code' });
    // doctor says the server offers device login, and where.
    const doctor = JSON.parse((await runCli(['doctor', '--json'], { env, timeoutMs: 60_000 })).stdout) as Json;
    const metadataCheck = (doctor.checks as Json[]).find((check) => check.name === 'server metadata');
    expect(metadataCheck?.detail).toContain(`device login (RFC 8628) at ${emulator.baseUrl}/oauth2/authorize_device`);
    const refreshed = await runCli(['refresh', '--json'], { env });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const renewed = (JSON.parse(refreshed.stdout) as Json).access_token as string;
    expect(emulator.state.findActiveToken(renewed)).toBeDefined();
    const logout = await runCli(['logout'], { env });
    expect(logout.code, logout.stderr).toBe(0);
    expect(emulator.state.findActiveToken(renewed)).toBeUndefined();
  }, 90_000);

  it('by the profile setting on the origin (a server with no metadata, as GitLab): the setting is kept for the next login', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5', deviceIntervalS: 1, autoApprove: true });
    const configDir = makeConfigDir();
    const env = signInEnv(emulator, configDir);
    const without = await runCli(['login', '--device'], { env });
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('--device-authorization-url');
    const url = `${emulator.baseUrl}/oauth2/authorize_device`;
    const login = startCli(['login', '--device', '--device-authorization-url', url], { env, timeoutMs: 60_000 });
    const shown = await shownCode(login);
    // The complete address approves at once on the emulator with auto-approve (a phone scanning it).
    expect(await (await fetch(shown.complete)).text()).toContain('Device approved');
    expect((await login.done).code).toBe(0);
    expect((readConfig(configDir) as Json).profiles.default.device_authorization_url).toBe(url);
    const again = startCli(['login', '--device'], { env, timeoutMs: 60_000 });
    await fetch((await shownCode(again)).complete);
    expect((await again.done).code).toBe(0);
  }, 90_000);

  it("against the suite's real Doorkeeper 5.5 (its device grant registered through Doorkeeper::GrantFlow), by the setting as a GitLab user gives it: Chromium types the code, the API accepts the token, logout ends the grant", async () => {
    const doorkeeper = await startDoorkeeper({ deviceIntervalS: 1 });
    const configDir = makeConfigDir();
    const env = doorkeeper.env(configDir) as Record<string, string>;
    const url = `${doorkeeper.baseUrl}/oauth2/authorize_device`;
    const login = startCli(['login', '--device', '--device-authorization-url', url, '--json'], {
      env,
      timeoutMs: 90_000,
    });
    const shown = await shownCode(login);
    await approveInChromium(shown.uri, shown.code);
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    const accessToken = (JSON.parse(result.stdout) as Json).access_token as string;
    const api = await runCli(['api', '/api/me'], { env });
    expect(api.code, api.stderr).toBe(0);
    expect((await runCli(['refresh'], { env })).code).toBe(0);
    expect((await runCli(['logout'], { env })).code).toBe(0);
    const tokens = await doorkeeper.tokens();
    expect(tokens.some((token) => token.token === accessToken)).toBe(true);
    expect(tokens.filter((token) => !token.revoked && !token.expired)).toEqual([]);
  }, 120_000);

  it('for programs: --device --start --json prints the code (never the device code) and keeps it; --complete waits for the approval and stores the grant', async () => {
    const emulator = await deviceEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = signInEnv(emulator, configDir);
    const start = await runCli(['login', '--device', '--start', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const started = JSON.parse(start.stdout) as Json;
    expect(Object.keys(started).sort()).toEqual([
      'expires_at',
      'interval',
      'profile',
      'schema_version',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    const pending = (readConfig(configDir) as Json).profiles.default.pending_login as Json;
    expect(pending).toMatchObject({ response_type: 'device', state: started.user_code });
    expect(start.stdout + start.stderr).not.toContain(pending.code_verifier as string);
    expect(start.stderr).toContain('mmauth login --complete');
    const complete = startCli(['login', '--complete', '--json'], { env, timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await (await fetch(started.verification_uri_complete as string)).text()).toContain('Device approved');
    const result = await complete.done;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ flow: 'device', profile: 'default' });
    const profile = (readConfig(configDir) as Json).profiles.default as Json;
    expect(profile.pending_login).toBeUndefined();
    expect(profile.token.device).toBe(true);
    const again = await runCli(['login', '--complete'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('no device login waiting');
  }, 90_000);

  it('--qr draws the complete address as a QR code on the terminal (the one qrcode makes of it); without --qr, none', async () => {
    const emulator = await deviceEmulator({ autoApprove: true });
    const env = signInEnv(emulator, makeConfigDir());
    const login = startCli(['login', '--device', '--qr'], { env, timeoutMs: 60_000 });
    const shown = await shownCode(login);
    const drawn = (await QRCode.toString(shown.complete, { type: 'utf8' })).replace(/\n+$/, '');
    await login.waitForStderr(/▀/, 10_000);
    await fetch(shown.complete);
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(drawn);
    const plain = startCli(['login', '--device'], { env, timeoutMs: 60_000 });
    await fetch((await shownCode(plain)).complete);
    expect((await plain.done).stderr).not.toContain('▀');
  }, 60_000);

  it('polls at the interval, waits on authorization_pending, and after slow_down waits 5 s more', async () => {
    const server = await scriptedServer(['authorization_pending', 'slow_down', 'token']);
    const configDir = makeConfigDir();
    const env = scriptedEnv(server.baseUrl, configDir);
    const login = await runCli(
      ['login', '--device', '--no-probe', '--device-authorization-url', `${server.baseUrl}/device`],
      { env, timeoutMs: 60_000 },
    );
    expect(login.code, login.stderr).toBe(0);
    expect(server.polls).toHaveLength(3);
    const gaps = server.polls.slice(1).map((at, i) => at - (server.polls[i] ?? at));
    // 1 s after authorization_pending; after the slow_down on the second poll, 6 s (never sooner).
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(5_950);
  }, 60_000);

  it('a denial ends with device_access_denied (exit 4), an expired code with device_code_expired (exit 3)', async () => {
    const emulator = await deviceEmulator({ lifetimeS: 3 });
    const env = signInEnv(emulator, makeConfigDir());
    const denied = startCli(['login', '--device', '--json'], { env, timeoutMs: 60_000 });
    await decide(emulator, (await shownCode(denied)).code, 'deny');
    const deniedResult = await denied.done;
    expect(deniedResult.code).toBe(4);
    expect(JSON.parse(deniedResult.stdout).error.code).toBe('device_access_denied');
    const expired = await runCli(['login', '--device', '--json'], { env, timeoutMs: 60_000 });
    expect(expired.code).toBe(3);
    expect(JSON.parse(expired.stdout).error.code).toBe('device_code_expired');
    expect(emulator.state.sizes().tokens).toBe(1); // the seeded personal access token only
  }, 60_000);

  it('a device authorization endpoint on another origin is refused before anything is sent there', async () => {
    const emulator = await deviceEmulator();
    const elsewhere = await scriptedServer([]);
    const env = signInEnv(emulator, makeConfigDir());
    const result = await runCli(['login', '--device', '--device-authorization-url', `${elsewhere.baseUrl}/device`], {
      env,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not on');
    expect(elsewhere.polls).toEqual([]);
  });

  it('Ctrl-C while polling: exit 130 within a second or two, and nothing of the client is live on the server', async () => {
    const emulator = await deviceEmulator();
    const env = signInEnv(emulator, makeConfigDir());
    const login = startCli(['login', '--device'], { env, timeoutMs: 60_000 });
    const { code } = await shownCode(login);
    await new Promise((r) => setTimeout(r, 1_500));
    const sentAt = Date.now();
    login.child.kill('SIGINT');
    const result = await login.done;
    expect(result.code).toBe(130);
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    // Approved after the user gave up: no poll comes any more, so nothing is minted.
    await decide(emulator, code, 'approve');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(emulator.state.sizes().tokens).toBe(1);
  }, 60_000);

  it('Ctrl-C while a poll is out: the poll is waited for, and the grant it brings is revoked (refresh and access token), never stored; exit 130', async () => {
    const server = await scriptedServer(['token'], { tokenDelayMs: 2_000 });
    const configDir = makeConfigDir();
    const env = scriptedEnv(server.baseUrl, configDir);
    const login = startCli(
      ['login', '--device', '--no-probe', '--device-authorization-url', `${server.baseUrl}/device`],
      {
        env,
        timeoutMs: 60_000,
      },
    );
    // The first poll goes out after the 1-s interval and is answered 2 s later: Ctrl-C in between.
    const until = Date.now() + 20_000;
    while (server.polls.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    login.child.kill('SIGINT');
    const result = await login.done;
    expect(result.code).toBe(130);
    expect(server.revoked).toEqual(['scripted-refresh', 'scripted-access']);
    expect(result.stderr).toContain('revoked at once');
    const stored = existsSync(join(configDir, 'config.json')) ? (readConfig(configDir) as Json) : {};
    expect(stored.profiles?.default?.token).toBeUndefined();
  }, 60_000);

  it('login with no display and no BROWSER (stdin not a terminal): the device grant where it is offered, the address to paste back where not', async () => {
    const offering = await deviceEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const chosen = startCli(['login'], { env: signInEnv(offering, configDir), timeoutMs: 60_000 });
    await chosen.waitForStderr(/No browser can open here \(there is no display/, 20_000);
    await fetch((await shownCode(chosen)).complete);
    expect((await chosen.done).code).toBe(0);
    expect((readConfig(configDir) as Json).profiles.default.token.device).toBe(true);
    const plain = await startTestEmulator({ flavor: 'doorkeeper5' });
    const pasting = startCli(['login', '--wait', '3'], { env: signInEnv(plain, makeConfigDir()), timeoutMs: 30_000 });
    const result = await pasting.done;
    expect(result.stderr).toContain('/oauth2/authorize?');
    expect(result.stderr).not.toContain('enter the code');
    expect(plain.requests.some((r) => r.url.startsWith('/oauth2/authorize_device'))).toBe(false);
  }, 90_000);

  it('getToken() and exec on a profile with no token never start a device sign-in', async () => {
    const emulator = await deviceEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = signInEnv(emulator, configDir);
    const exec = await runCli(['exec', '--', process.execPath, '-e', '0'], { env });
    expect(exec.code).toBe(4);
    const script = `const { getToken } = await import(${JSON.stringify(INDEX)});
      try { await getToken(); } catch (error) { console.log(error.code); }`;
    const library = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: cleanEnv(env),
      encoding: 'utf8',
      timeout: 20_000,
    });
    // No profile yet: the library says so, and signs nobody in.
    expect(library.stdout.trim()).toBe('unknown_profile');
    expect(exec.stderr + library.stderr + library.stdout).not.toMatch(/enter the code/);
    expect(emulator.requests.some((r) => r.url.startsWith('/oauth2/authorize_device'))).toBe(false);
  }, 60_000);
});
