/**
 * Two-step login, for programs and remote machines: `--start` stores the request and prints the
 * URL without listening; a person approves in any browser; `--complete <url>` finishes it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { readConfigText, startTestEmulator, storedAccessToken } from '../support/emulator.js';
import { startListeningFixture } from '../support/listening-fixture.js';

async function started(options: { autoApprove?: boolean } = { autoApprove: true }) {
  const emulator = await startTestEmulator(options);
  const configDir = makeConfigDir();
  const env = emulator.env(configDir);
  const start = await runCli(['login', '--start', '--json'], { env });
  expect(start.code, start.stderr).toBe(0);
  const document = JSON.parse(start.stdout) as {
    authorization_url: string;
    redirect_uri: string;
    expires_at: string;
    profile: string;
  };
  return { emulator, configDir, env, document };
}

/** A browser stand-in on another machine: approves and returns the address it ends on, which it cannot load. */
async function approve(authorizationUrl: string): Promise<string> {
  return (await fetch(authorizationUrl, { redirect: 'manual' })).headers.get('location') ?? '';
}

describe('login --start, then --complete', () => {
  it('stores a valid token; nothing listened on the redirect URI; the verifier was never printed', async () => {
    const { emulator, configDir, env, document } = await started();
    expect(Object.keys(document).sort()).toEqual([
      'authorization_url',
      'expires_at',
      'profile',
      'redirect_uri',
      'schema_version',
    ]);
    expect(document.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(readConfigText(configDir)).toContain('pending_login');
    const redirect = await approve(document.authorization_url);
    await expect(fetch(redirect)).rejects.toThrow();
    const complete = await runCli(['login', '--complete', redirect, '--json'], { env });
    expect(complete.code, complete.stderr).toBe(0);
    expect(JSON.parse(complete.stdout)).toMatchObject({ grant: 'authorization_code', profile: 'default' });
    const token = storedAccessToken(configDir);
    expect(
      (await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    expect(readConfigText(configDir)).not.toContain('pending_login');
    const verifier =
      new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/token')?.body).get('code_verifier') ?? '';
    expect(verifier).toMatch(/^[\w-]{43,}$/);
    expect(JSON.stringify(document)).not.toContain(verifier);
  });

  it('--complete - reads the address from stdin', async () => {
    const { env, document } = await started();
    const redirect = await approve(document.authorization_url);
    const complete = await runCli(['login', '--complete', '-'], { env, input: `${redirect}\n` });
    expect(complete.code, complete.stderr).toBe(0);
  });

  it.each([
    ['a wrong state', (url: string) => url.replace(/state=[^&]+/, 'state=forged'), 4, 'state_mismatch'],
    [
      'a denial',
      (url: string) => `${url.split('?')[0]}?error=access_denied&state=${new URL(url).searchParams.get('state')}`,
      4,
      'authorization_error',
    ],
  ])('%s: exit %i (%s), nothing stored', async (_what, tamper, exitCode, code) => {
    const { configDir, env, document } = await started();
    const redirect = tamper(await approve(document.authorization_url));
    const complete = await runCli(['login', '--complete', redirect, '--json'], { env });
    expect(complete.code).toBe(exitCode);
    expect(JSON.parse(complete.stdout).error.code).toBe(code);
    expect(readConfigText(configDir)).not.toContain('"token"');
  });

  it('an expired pending login, a missing one, and the reuse of a completed one: exit 2', async () => {
    const { configDir, env, document } = await started();
    const redirect = await approve(document.authorization_url);
    const path = join(configDir, 'config.json');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.profiles.default.pending_login.expires_at = new Date(Date.now() - 1000).toISOString();
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    const expired = await runCli(['login', '--complete', redirect, '--json'], { env });
    expect(expired.code).toBe(2);
    expect(JSON.parse(expired.stdout).error.code).toBe('pending_login_expired');
    const missing = await runCli(['login', '--complete', redirect, '--json'], { env });
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error.code).toBe('pending_login_missing');

    const again = await started();
    const url = await approve(again.document.authorization_url);
    expect((await runCli(['login', '--complete', url], { env: again.env })).code).toBe(0);
    const reuse = await runCli(['login', '--complete', url, '--json'], { env: again.env });
    expect(reuse.code).toBe(2);
    expect(JSON.parse(reuse.stdout).error.code).toBe('pending_login_missing');
  });

  it('a newer --start replaces the older one, and --implicit works in two steps too', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    const first = JSON.parse((await runCli(['login', '--start', '--json'], { env })).stdout);
    const second = JSON.parse((await runCli(['login', '--start', '--implicit', '--json'], { env })).stdout);
    const stale = await approve(first.authorization_url);
    expect((await runCli(['login', '--complete', stale], { env })).code).toBe(4);
    const fresh = await approve(second.authorization_url);
    expect(fresh).toContain('#access_token=');
    const complete = await runCli(['login', '--complete', fresh, '--json'], { env });
    expect(complete.code, complete.stderr).toBe(0);
    expect(JSON.parse(complete.stdout)).toMatchObject({ grant: 'implicit' });
  });

  it('--start contacts no redirect URI: a listener there hears nothing', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const fixture = await startListeningFixture();
    const start = await runCli(['login', '--start', '--redirect-uri', `${fixture.baseUrl}/callback`], {
      env: emulator.env(makeConfigDir()),
    });
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toContain('/oauth2/authorize?');
    expect(fixture.connections()).toBe(0);
  });
});

describe('login under CI with no browser to open', () => {
  it('exits 2 at once, naming --start/--complete, client-credentials, BROWSER and --no-browser', async () => {
    const emulator = await startTestEmulator();
    const startedMs = Date.now();
    const result = await runCli(['login'], { env: emulator.env(makeConfigDir(), { CI: 'true' }) });
    expect(result.code).toBe(2);
    for (const name of ['--start', '--complete', 'client-credentials', 'BROWSER', '--no-browser']) {
      expect(result.stderr).toContain(name);
    }
    expect(Date.now() - startedMs).toBeLessThan(5_000);
    expect(emulator.requests).toHaveLength(0);
  });
});
