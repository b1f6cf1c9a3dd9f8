/**
 * `mmauth exec`: a child that runs across several token lifetimes keeps getting accepted tokens
 * through MMAUTH_TOKEN_FILE and MMAUTH_TOKEN_URL, one renewal per lifetime across every mmauth
 * process; the child never sees the refresh token or the client secret; signals and exit codes pass
 * through; stdout is the child's, byte for byte; the private directory is gone afterwards.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanEnv, HEADLESS_BROWSER, makeConfigDir, runCli, startCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';

const CHILD = resolve(import.meta.dirname, '../support/exec-child.mjs');

type Json = Record<string, any>;

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-exec-test-'));
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return dir;
}

/** A signed-in code-flow profile on an emulator issuing `ttlS`-second tokens (refresh tokens on). */
async function signedIn(ttlS: number) {
  const emulator = await startTestEmulator({ tokenTtlS: ttlS, flavor: 'doorkeeper5' });
  const configDir = makeConfigDir();
  const env = { ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }), MMAUTH_CREDENTIAL_STORE: 'file' };
  expect((await runCli(['login'], { env })).code).toBe(0);
  const renewals = () =>
    emulator.requests.filter((r) => new URLSearchParams(r.body).get('grant_type') === 'refresh_token').length;
  return { emulator, configDir, env, renewals };
}

const stored = (configDir: string): Json => (readConfig(configDir) as Json).profiles.default;

describe('mmauth exec', () => {
  it('with 4-second tokens, a child running 15 s keeps getting accepted tokens through MMAUTH_TOKEN_FILE and MMAUTH_TOKEN_URL, one renewal per lifetime; nothing secret in its environment or files; the directory is removed', async () => {
    const { emulator, configDir, env, renewals } = await signedIn(4);
    const report = join(scratch(), 'report.json');
    const refreshTokens: string[] = [stored(configDir).token.refresh_token];
    const watcher = setInterval(() => {
      const rt = stored(configDir).token?.refresh_token;
      if (rt !== undefined && !refreshTokens.includes(rt)) refreshTokens.push(rt);
    }, 100);
    onTestFinished(() => clearInterval(watcher));
    // The child asks again on a 401, as README tells a program to: on a loaded machine a stall of
    // more than the 2 s margin can hand it a token that expired meanwhile, and what must hold is
    // that asking again gets an accepted one (askedAgain counts those, at most one in ten).
    const result = await runCli(['exec', '--serve', '--', process.execPath, CHILD], {
      env: {
        ...env,
        DURATION_MS: '15000',
        API_URL: `${emulator.baseUrl}/api/me`,
        REPORT_FILE: report,
        ASK_AGAIN_ON_401: '1',
        ASK_AGAIN_WAIT_MS: '5000',
      },
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const child = JSON.parse(readFileSync(report, 'utf8')) as Json;
    expect(child.statuses.length).toBeGreaterThan(40);
    expect(child.statuses.every((s: unknown) => s === 200)).toBe(true);
    expect(child.askedAgain).toBeLessThanOrEqual(child.statuses.length / 10);
    // Half a 4-second lifetime is the margin: a renewal every 2 s or so, never more than one per token.
    expect(child.seen.length).toBeGreaterThanOrEqual(4);
    expect(renewals()).toBeLessThanOrEqual(child.seen.length);
    for (const secret of [...refreshTokens, emulator.client.clientSecret]) {
      expect(child.environ).not.toContain(secret);
      expect(JSON.stringify(child.files)).not.toContain(secret);
    }
    expect(child.environ).toContain('MMAUTH_TOKEN_FILE=');
    expect(child.environ).not.toContain('MMAUTH_CLIENT_SECRET=');
    expect(existsSync(child.dir)).toBe(false);
  }, 40_000);

  it('5 exec children and 20 `mmauth token` calls on one expiring profile: one renewal per lifetime in all; a child that asks again on a 401 (README) always gets an accepted token', async () => {
    const { emulator, env, renewals } = await signedIn(4);
    const dir = scratch();
    const startedMs = Date.now();
    const children = Array.from({ length: 5 }, (_, i) =>
      startCli(['exec', '--', process.execPath, CHILD], {
        env: {
          ...env,
          DURATION_MS: '6000',
          // Another exec's child presents the new token the moment its exec switched: until this exec
          // sees the store change (milliseconds), its child may hold the previous one (README's window).
          ASK_AGAIN_ON_401: '1',
          API_URL: `${emulator.baseUrl}/api/me`,
          REPORT_FILE: join(dir, `${i}.json`),
        },
        timeoutMs: 30_000,
      }),
    );
    for (let i = 0; i < 20; i++) {
      await sleep(300);
      expect((await runCli(['token'], { env })).code).toBe(0);
    }
    const results = await Promise.all(children.map((c) => c.done));
    const elapsedMs = Date.now() - startedMs;
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    const reports = children.map((_, i) => JSON.parse(readFileSync(join(dir, `${i}.json`), 'utf8')) as Json);
    // Every exec follows the store, so the window is milliseconds: across all five children, fewer
    // re-asks than renewals (0 in 4 runs under a doubled load; the bound leaves room for a slow CI).
    const askedAgain = reports.reduce((sum, report) => sum + (report.askedAgain as number), 0);
    expect(askedAgain).toBeLessThanOrEqual(renewals());
    // One renewal per half-lifetime (2 s of a 4 s token) that passed, however long a loaded machine
    // took, plus the one in flight at the end: never one per process (25 of them).
    expect(renewals()).toBeGreaterThanOrEqual(2);
    expect(renewals()).toBeLessThanOrEqual(Math.ceil(elapsedMs / 2_000) + 1);
  }, 40_000);

  it.each([
    [0, 'exit 0'],
    [3, 'exit 3'],
  ])('passes the exit code on: %s', async (code) => {
    const { env } = await signedIn(7200);
    const result = await runCli(['exec', '--', process.execPath, '-e', `process.exit(${code})`], { env });
    expect(result.code).toBe(code);
  });

  it('forwards SIGTERM to the child and exits 128 + 15; the private directory is removed', async () => {
    const { env } = await signedIn(7200);
    const running = startCli(
      [
        'exec',
        '--',
        process.execPath,
        '-e',
        "console.error('dir=' + require('path').dirname(process.env.MMAUTH_TOKEN_FILE)); setInterval(() => {}, 1000)",
      ],
      { env, timeoutMs: 20_000 },
    );
    const [, dir] = await running.waitForStderr(/dir=(\S+)/);
    expect(statSync(dir ?? '').mode & 0o777).toBe(0o700);
    expect(statSync(join(dir ?? '', 'token')).mode & 0o777).toBe(0o600);
    running.child.kill('SIGTERM');
    const result = await running.done;
    expect(result.code).toBe(128 + 15);
    expect(existsSync(dir ?? '')).toBe(false);
  });

  it("stdout is the child's, byte for byte (no re-piping)", async () => {
    const { env } = await signedIn(7200);
    const script = 'process.stdout.write(Buffer.from([0, 1, 2, 27, 91, 51, 49, 109, 255, 10]))';
    const alone = spawnSync(process.execPath, ['-e', script]);
    const through = spawnSync(process.execPath, [BIN, 'exec', '--', process.execPath, '-e', script], {
      env: cleanEnv(env),
    });
    expect(through.status, String(through.stderr)).toBe(0);
    expect(Buffer.compare(through.stdout, alone.stdout)).toBe(0);
  });

  it("exec --proxy is not silent while the service refuses its child's token and no other can be had: one warning on stderr", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    // A token the service does not know, with no refresh token: nothing can renew it here.
    writeProfiles(configDir, {
      default: { base_url: emulator.baseUrl, client_id: 'mmauth-demo', token: storedToken('unknown-token', inS(3600)) },
    });
    const script = `(async () => { for (let i = 0; i < 3; i++) console.log((await fetch(process.env.MMAUTH_API_URL + '/api/me')).status); })()`;
    const result = await runCli(['exec', '--proxy', '--', process.execPath, '-e', script], {
      env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' },
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual(['401', '401', '401']);
    // Said once (rate-limited), not once per call.
    expect(result.stderr.match(/the service refused the child's token \(HTTP 401\)/g)).toHaveLength(1);
  });

  it('no usable token: exit 4 as `token` does, and the child is not started', async () => {
    const configDir = makeConfigDir();
    const marker = join(scratch(), 'started');
    const result = await runCli(
      ['exec', '--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`],
      {
        env: { MMAUTH_CONFIG_DIR: configDir },
      },
    );
    expect(result.code).toBe(4);
    expect(existsSync(marker)).toBe(false);
  });

  it('the token endpoint refuses a missing or wrong authorization (401), a foreign Host (403), another path (404) or method (405)', async () => {
    const { env } = await signedIn(7200);
    const running = startCli(
      [
        'exec',
        '--serve',
        '--',
        process.execPath,
        '-e',
        "console.error('url=' + process.env.MMAUTH_TOKEN_URL + ' auth=' + process.env.MMAUTH_TOKEN_URL_AUTHORIZATION); setInterval(() => {}, 1000)",
      ],
      { env, timeoutMs: 20_000 },
    );
    const [, url, auth] = await running.waitForStderr(/url=(\S+) auth=(\S+)/);
    const target = new URL(url ?? '');
    const raw = (path: string, headers: Record<string, string>, method = 'GET') =>
      new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((done, fail) => {
        const req = request({ host: '127.0.0.1', port: target.port, path, method, headers }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => done({ status: res.statusCode ?? 0, body, headers: res.headers }));
        });
        req.on('error', fail);
        req.end();
      });
    const host = target.host;
    expect((await raw('/token', { host })).status).toBe(401);
    expect((await raw('/token', { host, authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await raw('/token', { host: 'attacker.example', authorization: `Bearer ${auth}` })).status).toBe(403);
    expect((await raw('/other', { host, authorization: `Bearer ${auth}` })).status).toBe(404);
    expect((await raw('/token', { host, authorization: `Bearer ${auth}` }, 'POST')).status).toBe(405);
    const good = await raw('/token', { host, authorization: `Bearer ${auth}` });
    expect(good.status).toBe(200);
    expect(good.headers['cache-control']).toBe('no-store');
    expect(Object.keys(JSON.parse(good.body)).sort()).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'token_type',
    ]);
    // An instant in whole seconds, as every other document gives one.
    expect((JSON.parse(good.body) as { expires_at: string }).expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    running.child.kill('SIGTERM');
    await running.done;
  });
});
