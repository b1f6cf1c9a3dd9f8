/**
 * Tokens that stay valid: a stale token is renewed before it is handed out, with its refresh token
 * (code flow) or a new client credentials grant, once across parallel processes, and the store is
 * left as it was when renewal fails.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator, type TestEmulator } from '../support/emulator.js';

interface StoredForm {
  profiles: Record<
    string,
    { token?: { access_token: string; refresh_token?: string; expires_at?: string; obtained_at: string } }
  >;
}

const stored = (configDir: string, profile = 'default') =>
  (readConfig(configDir) as StoredForm).profiles[profile]?.token;

/** Moves the stored token's clock back by an hour, as if that much time had passed: it is now stale. */
function ageStoredToken(configDir: string, profile = 'default'): void {
  const config = readConfig(configDir) as StoredForm;
  const token = config.profiles[profile]?.token;
  if (token === undefined) throw new Error('no stored token');
  const hourMs = 3_600_000;
  token.obtained_at = new Date(Date.parse(token.obtained_at) - 3 * hourMs).toISOString();
  token.expires_at = new Date(Date.now() - hourMs).toISOString();
  writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
}

const tokenRequests = (emulator: TestEmulator, grantType: string) =>
  emulator.requests.filter(
    (r) => r.url === '/oauth2/token' && new URLSearchParams(r.body).get('grant_type') === grantType,
  );

async function isAccepted(emulator: TestEmulator, token: string): Promise<boolean> {
  return (
    (await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } })).status ===
    200
  );
}

describe('renewal with a refresh token (code flow)', () => {
  it('after real expiry (--token-ttl 2), token and header renew: a new token the server accepts, the old refresh token gone', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 2, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    const login = await runCli(['login', '--json'], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).not.toContain('refresh_token');
    const first = stored(configDir);
    expect(first?.refresh_token).toMatch(/^[\w-]{43}$/);
    await sleep(2_200);

    const token = await runCli(['token'], { env });
    expect(token.code, token.stderr).toBe(0);
    const renewed = token.stdout.trim();
    expect(renewed).not.toBe(first?.access_token);
    expect(stored(configDir)?.access_token).toBe(renewed);
    expect(stored(configDir)?.refresh_token).not.toBe(first?.refresh_token);
    expect(readConfigText(configDir)).not.toContain(first?.refresh_token ?? '-');
    expect(await isAccepted(emulator, renewed)).toBe(true);
    const refresh = new URLSearchParams(tokenRequests(emulator, 'refresh_token')[0]?.body);
    expect(refresh.has('scope')).toBe(false);
    expect(refresh.get('client_secret')).toBe(emulator.client.clientSecret);

    await sleep(2_200);
    const header = await runCli(['header'], { env });
    expect(header.code, header.stderr).toBe(0);
    expect(header.stdout).toMatch(/^Authorization: Bearer [\w-]{43}\n$/);
    expect(header.stdout).not.toContain(renewed);
    expect(tokenRequests(emulator, 'refresh_token')).toHaveLength(2);
  }, 20_000);

  it('20 parallel `mmauth token` on a stale profile: one refresh request, 20 identical tokens, exit 0 each', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    ageStoredToken(configDir);
    const runs = await Promise.all(Array.from({ length: 20 }, () => runCli(['token'], { env, timeoutMs: 30_000 })));
    expect(runs.map((r) => r.code)).toEqual(Array(20).fill(0));
    expect(new Set(runs.map((r) => r.stdout)).size).toBe(1);
    expect(tokenRequests(emulator, 'refresh_token')).toHaveLength(1);
    expect(runs[0]?.stdout.trim()).toBe(stored(configDir)?.access_token);
  }, 40_000);

  it('a fresh token costs no request; --no-renew never touches the network, even for a stale token (exit 4)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const before = emulator.requests.length;
    expect((await runCli(['token'], { env })).code).toBe(0);
    expect(emulator.requests.length).toBe(before);
    ageStoredToken(configDir);
    const noRenew = await runCli(['token', '--no-renew'], { env });
    expect(noRenew.code).toBe(4);
    expect(emulator.requests.length).toBe(before);
  });

  it('a refresh token the server no longer honours, with an expired access token: both dropped (dead is dead), exit 4 naming login', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_PROFILE: 'work' });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const refreshToken = stored(configDir, 'work')?.refresh_token ?? '';
    emulator.state.refreshTokens.revoke(refreshToken);
    ageStoredToken(configDir, 'work');
    const result = await runCli(['token'], { env });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('the server no longer honours the refresh token of profile "work" (invalid_grant)');
    expect(result.stderr).toContain('sign in again: mmauth login --profile work');
    expect(stored(configDir, 'work')).toBeUndefined();
    expect(
      (readConfig(configDir) as { profiles: Record<string, { last_grant?: string }> }).profiles.work?.last_grant,
    ).toBe('authorization_code');
    const again = await runCli(['token'], { env });
    expect(again.code).toBe(4);
    expect(again.stdout).toBe('');
  });

  it('a refresh token the server no longer honours while token info still accepts the access token: only the refresh token goes', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const before = stored(configDir);
    emulator.state.refreshTokens.revoke(before?.refresh_token ?? '');
    // Stale here (30 s left of 7200), still alive on the server.
    const config = readConfig(configDir) as StoredForm;
    const token = config.profiles.default?.token;
    if (token === undefined) throw new Error('no stored token');
    token.obtained_at = new Date(Date.now() - 7170_000).toISOString();
    token.expires_at = new Date(Date.now() + 30_000).toISOString();
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const result = await runCli(['token'], { env });
    expect(result.code).toBe(4);
    expect(stored(configDir)?.refresh_token).toBeUndefined();
    expect(stored(configDir)?.access_token).toBe(before?.access_token);
  });

  it('the server unreachable during a renewal: exit 3 for an expired token, the store byte-identical', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    ageStoredToken(configDir);
    const before = readConfigText(configDir);
    await emulator.close();
    const result = await runCli(['token'], { env });
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBe(before);
  });

  it('mmauth refresh renews now, whatever the lifetime left; --json is the login document without the refresh token', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const old = stored(configDir);
    const result = await runCli(['refresh', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ grant: 'authorization_code', profile: 'default', expires_in: 7200 });
    expect(json.access_token).not.toBe(old?.access_token);
    expect(result.stdout).not.toContain(stored(configDir)?.refresh_token ?? '-');
  });
});

describe('renewal of a client credentials profile', () => {
  it('renews itself after expiry with its stored secret, once across 20 parallel processes', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_PROFILE: 'ci' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    ageStoredToken(configDir, 'ci');
    const withoutEnvSecret = { ...env, MMAUTH_CLIENT_SECRET: undefined };
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => runCli(['token'], { env: withoutEnvSecret, timeoutMs: 30_000 })),
    );
    expect(runs.map((r) => r.code)).toEqual(Array(20).fill(0));
    expect(new Set(runs.map((r) => r.stdout)).size).toBe(1);
    expect(tokenRequests(emulator, 'client_credentials')).toHaveLength(2);
    expect(await isAccepted(emulator, runs[0]?.stdout.trim() ?? '')).toBe(true);
  }, 40_000);

  it('without a secret at hand it cannot renew: exit 4 naming `mmauth client-credentials --profile ci`', async () => {
    const configDir = makeConfigDir();
    const emulator = await startTestEmulator();
    expect(
      (await runCli(['client-credentials', '--no-save', '--profile', 'ci'], { env: emulator.env(configDir) })).code,
    ).toBe(0);
    const { writeProfiles, storedToken, inS } = await import('../support/profiles.js');
    writeProfiles(configDir, {
      ci: {
        base_url: emulator.baseUrl,
        client_id: 'mmauth-demo',
        token: storedToken('c'.repeat(30), inS(-5), 'client_credentials'),
      },
    });
    const result = await runCli(['token', '--profile', 'ci'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('get a new one: mmauth client-credentials --profile ci');
  });
});

describe('revocation that ends the grant', () => {
  it.each(['revoke', 'logout'])(
    '%s after real expiry (doorkeeper5, which ignores an expired token’s revocation): renew, use once, revoke; no live refresh token left',
    async (command) => {
      const emulator = await startTestEmulator({ tokenTtlS: 2, flavor: 'doorkeeper5' });
      const configDir = makeConfigDir();
      const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
      expect((await runCli(['login'], { env })).code).toBe(0);
      expect(emulator.state.refreshTokens.size).toBe(1);
      await sleep(2_200);
      // revoke under --json (the document), logout in words (decisions 32).
      const isJson = command === 'revoke';
      const result = await runCli(isJson ? [command, '--json'] : [command], { env });
      expect(result.code, result.stderr).toBe(0);
      if (isJson) {
        expect(JSON.parse(result.stdout)).toMatchObject({ confirmed: true });
        expect(summaryLines(result.stderr)).toEqual([]);
      } else {
        expect(result.stderr).toContain('the access token had expired: renewed it first');
        expect(result.stderr).toContain('(confirmed: token info now refuses it)');
      }
      expect(emulator.state.refreshTokens.size).toBe(0);
      expect(tokenRequests(emulator, 'refresh_token')).toHaveLength(1);
    },
    15_000,
  );

  it('a live token with a refresh token: revoking the access token ends the pair (the refresh token is dead too)', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const refreshToken = stored(configDir)?.refresh_token ?? '';
    const result = await runCli(['logout'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(emulator.state.refreshTokens.size).toBe(0);
    const reuse = await fetch(`${emulator.baseUrl}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    });
    expect(reuse.status).toBe(400);
  });
});

describe('a renewal killed midway', () => {
  it('kill -9 at random points of 12 renewals never leaves the profile without a usable refresh chain', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const { startCli } = await import('../support/cli.js');
    const { rmSync } = await import('node:fs');
    for (let round = 0; round < 12; round++) {
      const running = startCli(['refresh'], { env, timeoutMs: 10_000 });
      await sleep(20 + ((round * 37) % 120));
      running.child.kill('SIGKILL');
      await running.done;
      // The killed holder's lock would go stale after 10 s; here its time is up at once.
      rmSync(join(configDir, 'config.json.lock'), { recursive: true, force: true });
      rmSync(join(configDir, 'config.json.lock.pid'), { force: true });
      expect(() => readConfig(configDir)).not.toThrow();
    }
    const after = await runCli(['refresh', '--json'], { env });
    expect(after.code, after.stderr).toBe(0);
    expect(await isAccepted(emulator, JSON.parse(after.stdout).access_token)).toBe(true);
  }, 40_000);
});
