/**
 * The whole life of a grant against the emulator's `doorkeeper5` flavor, which rotates refresh
 * tokens on first use and keeps them alive for ever (server-behaviour.md, Refresh tokens 3, 6, 7):
 * whatever sequence of renewals, uses, network failures and kills came before, `logout` leaves no
 * refresh token the server honours, and before it exactly one is live (plus one for each
 * retirement the profile still owes). Every request goes through a gate proxy that can cut or hold
 * what it matches.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli, summaryLines } from '../support/cli.js';
import { readConfig, startTestEmulator, type TestEmulator } from '../support/emulator.js';
import { startGateProxy, type GateProxy } from '../support/gate-proxy.js';

interface StoredForm {
  profiles: Record<
    string,
    {
      chain_to_retire?: string;
      last_grant?: string;
      token?: { access_token: string; refresh_token?: string; expires_at?: string; obtained_at: string };
    }
  >;
}

const TOKEN_INFO = 'GET /oauth2/token/info';
const TOKEN = 'POST /oauth2/token';

/** A step of a sequence, run as a user (or a failure) would. */
type Step =
  | 'refresh'
  | 'token-renews'
  | 'api'
  | 'refresh-retirement-cut'
  | 'refresh-killed-retiring'
  | 'refresh-killed-before-server'
  | 'server-clock-past-expiry';

interface World {
  emulator: TestEmulator;
  gate: GateProxy;
  configDir: string;
  env: Record<string, string | undefined>;
}

function config(configDir: string): StoredForm {
  return readConfig(configDir) as StoredForm;
}

/** The stored token made stale by the local clock (30 s left of its lifetime), still alive on the server. */
function makeStale(configDir: string): void {
  const stored = config(configDir);
  const token = stored.profiles.default?.token;
  if (token === undefined) throw new Error('no stored token');
  const lifetimeMs = Date.parse(token.expires_at ?? '') - Date.parse(token.obtained_at);
  token.obtained_at = new Date(Date.now() - lifetimeMs + 30_000).toISOString();
  token.expires_at = new Date(Date.now() + 30_000).toISOString();
  writeFileSync(join(configDir, 'config.json'), JSON.stringify(stored), { mode: 0o600 });
}

/** A killed holder's lock would go stale after 10 s; here its time is up at once. */
function dropLock(configDir: string): void {
  rmSync(join(configDir, 'config.json.lock'), { recursive: true, force: true });
  rmSync(join(configDir, 'config.json.lock.pid'), { force: true });
}

async function killWhile(world: World, gatePrefix: string): Promise<void> {
  world.gate.set(gatePrefix, 'hold');
  const arrived = world.gate.waitFor(gatePrefix);
  const running = startCli(['refresh'], { env: world.env, timeoutMs: 15_000 });
  await arrived;
  running.child.kill('SIGKILL');
  await running.done;
  world.gate.set(gatePrefix, 'pass');
  dropLock(world.configDir);
}

async function run(world: World, step: Step): Promise<void> {
  const { env, configDir, gate } = world;
  switch (step) {
    case 'refresh': {
      const result = await runCli(['refresh'], { env });
      expect(result.code, result.stderr).toBe(0);
      return;
    }
    case 'token-renews': {
      makeStale(configDir);
      const before = config(configDir).profiles.default?.token?.access_token;
      const result = await runCli(['token'], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).not.toBe(before);
      return;
    }
    case 'api': {
      const result = await runCli(['api', '/api/me'], { env });
      expect(result.code, result.stderr).toBe(0);
      return;
    }
    case 'refresh-retirement-cut': {
      gate.set(TOKEN_INFO, 'cut');
      const result = await runCli(['refresh'], { env });
      gate.set(TOKEN_INFO, 'pass');
      expect(result.code, result.stderr).toBe(0);
      expect(config(configDir).profiles.default?.chain_to_retire).toBeDefined();
      return;
    }
    case 'refresh-killed-retiring':
      await killWhile(world, TOKEN_INFO);
      return;
    case 'refresh-killed-before-server':
      await killWhile(world, TOKEN);
      return;
    case 'server-clock-past-expiry':
      world.emulator.advanceSeconds(3 * 3600);
      return;
  }
}

/** Live refresh tokens the server honours, and what the profile says it still owes. */
function liveAndOwed(world: World): { live: number; owed: number } {
  const owed = (config(world.configDir).profiles.default?.chain_to_retire ?? '').split(' ').filter(Boolean).length;
  return { live: world.emulator.state.refreshTokens.size, owed };
}

/** Whether the server still answers a refresh with `refreshToken` (it would mint a new pair). */
async function isHonoured(world: World, refreshToken: string): Promise<boolean> {
  const response = await fetch(`${world.emulator.baseUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: world.emulator.client.clientId,
      client_secret: world.emulator.client.clientSecret ?? '',
    }),
  });
  return response.status === 200;
}

async function startWorld(): Promise<World> {
  const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
  const gate = await startGateProxy(emulator.baseUrl);
  const configDir = makeConfigDir();
  const env = emulator.env(configDir, {
    BROWSER: HEADLESS_BROWSER,
    MMAUTH_BASE_URL: gate.baseUrl,
    MMAUTH_CREDENTIAL_STORE: 'file',
  });
  return { emulator, gate, configDir, env };
}

const SEQUENCES: Step[][] = [
  ['refresh', 'refresh'],
  ['token-renews', 'refresh'],
  ['token-renews', 'token-renews'],
  ['refresh', 'api', 'refresh'],
  ['refresh-retirement-cut', 'refresh'],
  ['refresh-killed-retiring', 'refresh'],
  ['refresh-killed-retiring', 'refresh-killed-retiring'],
  ['refresh-killed-before-server', 'refresh'],
  ['refresh', 'refresh-retirement-cut'],
  ['refresh-killed-retiring'],
  ['api', 'refresh-retirement-cut', 'refresh-killed-retiring', 'token-renews'],
  ['refresh', 'refresh', 'server-clock-past-expiry'],
  ['refresh-killed-retiring', 'server-clock-past-expiry'],
];

describe('the refresh chain: logout leaves no refresh token alive (doorkeeper5 flavor)', () => {
  it.each(SEQUENCES.map((steps) => [steps.join(', '), steps] as const))(
    'login, %s, logout',
    async (_name, steps) => {
      const world = await startWorld();
      expect((await runCli(['login'], { env: world.env })).code).toBe(0);
      const held: string[] = [];
      const remember = () => {
        const refreshToken = config(world.configDir).profiles.default?.token?.refresh_token;
        if (refreshToken !== undefined && !held.includes(refreshToken)) held.push(refreshToken);
      };
      remember();
      for (const step of steps) {
        await run(world, step);
        remember();
        // One live refresh token, plus one for each retirement the profile still owes.
        const { live, owed } = liveAndOwed(world);
        expect(live, `after ${step}`).toBe(1 + owed);
      }
      const logout = await runCli(['logout', '--json'], { env: world.env });
      expect(logout.code, logout.stderr).toBe(0);
      expect(JSON.parse(logout.stdout)).toMatchObject({ logged_out: true });
      expect(world.emulator.state.refreshTokens.size).toBe(0);
      for (const refreshToken of held) expect(await isHonoured(world, refreshToken)).toBe(false);
    },
    60_000,
  );

  it('the two runs of the report: login; refresh; refresh leaves exactly one live refresh token, one request more per renewal', async () => {
    const world = await startWorld();
    expect((await runCli(['login'], { env: world.env })).code).toBe(0);
    const first = config(world.configDir).profiles.default?.token?.refresh_token ?? '';
    const before = world.gate.seen.length;
    expect((await runCli(['refresh'], { env: world.env })).code).toBe(0);
    expect(world.gate.seen.slice(before)).toEqual([TOKEN, TOKEN_INFO]);
    expect((await runCli(['refresh'], { env: world.env })).code).toBe(0);
    expect(world.emulator.state.refreshTokens.size).toBe(1);
    expect(await isHonoured(world, first)).toBe(false);
    expect(config(world.configDir).profiles.default?.chain_to_retire).toBeUndefined();
  });

  it('a retirement the network cut short is done at the next renewal, and said nowhere as done before', async () => {
    const world = await startWorld();
    expect((await runCli(['login'], { env: world.env })).code).toBe(0);
    await run(world, 'refresh-retirement-cut');
    expect(liveAndOwed(world)).toEqual({ live: 2, owed: 1 });
    await run(world, 'refresh');
    expect(liveAndOwed(world)).toEqual({ live: 1, owed: 0 });
  });

  it('a logout that cannot present an owed link fails (exit 3) and keeps the profile, then succeeds', async () => {
    const world = await startWorld();
    expect((await runCli(['login'], { env: world.env })).code).toBe(0);
    await run(world, 'refresh-retirement-cut');
    world.gate.set(TOKEN_INFO, 'cut');
    const failed = await runCli(['logout'], { env: world.env });
    expect(failed.code).toBe(3);
    expect(config(world.configDir).profiles.default?.token).toBeDefined();
    world.gate.set(TOKEN_INFO, 'pass');
    expect((await runCli(['logout'], { env: world.env })).code).toBe(0);
    expect(world.emulator.state.refreshTokens.size).toBe(0);
  });
});

describe('replacing a grant ends it', () => {
  it('three logins on one profile leave one live grant, each login reporting the one it ended; after logout none', async () => {
    const world = await startWorld();
    const first = await runCli(['login', '--json'], { env: world.env });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).replaced).toBeNull();
    const again = await runCli(['login', '--json'], { env: world.env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).replaced).toEqual({ revoked: true, confirmed: true, reason: null });
    expect(summaryLines(again.stderr)).toEqual([]);
    // Without --json, the same report in words (decisions 32: under --json the document says it).
    const third = await runCli(['login'], { env: world.env });
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toContain('The grant it replaced: Revoked');
    expect(world.emulator.state.refreshTokens.size).toBe(1);
    expect((await runCli(['logout'], { env: world.env })).code).toBe(0);
    expect(world.emulator.state.refreshTokens.size).toBe(0);
  });

  it('a replaced client credentials token stays live (another job may use it), the output says so, and logout ends it (decisions 40)', async () => {
    const world = await startWorld();
    expect((await runCli(['client-credentials'], { env: world.env })).code).toBe(0);
    const old = config(world.configDir).profiles.default?.token?.access_token ?? '';
    const again = await runCli(['client-credentials', '--replace', '--json'], { env: world.env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).replaced).toEqual({ revoked: false, confirmed: false, reason: 'left_to_expire' });
    expect(summaryLines(again.stderr)).toEqual([]);
    expect(world.emulator.state.findActiveToken(old)).toBeDefined();
    const second = config(world.configDir).profiles.default?.token?.access_token ?? '';
    const third = await runCli(['client-credentials', '--replace'], { env: world.env });
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toContain('stays live until');
    expect(third.stderr).toContain('`mmauth logout` ends it');
    expect(world.emulator.state.findActiveToken(second)).toBeDefined();
    const logout = await runCli(['logout', '--json'], { env: world.env });
    expect(logout.code, logout.stderr).toBe(0);
    expect(JSON.parse(logout.stdout)).toMatchObject({ logged_out: true, revoked: true, replaced_revoked: 2 });
    expect(world.emulator.state.findActiveToken(old)).toBeUndefined();
    expect(world.emulator.state.findActiveToken(second)).toBeUndefined();
  });

  it('client-credentials --no-save replaces nothing: replaced is null', async () => {
    const world = await startWorld();
    const result = await runCli(['client-credentials', '--no-save', '--json'], { env: world.env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).replaced).toBeNull();
  });
});

describe('a stored client secret belongs to its client id', () => {
  it("client-credentials --client-id B on a profile holding client A's secret never sends A's secret", async () => {
    const world = await startWorld();
    expect((await runCli(['client-credentials'], { env: world.env })).code).toBe(0);
    const secret = world.emulator.client.clientSecret ?? '';
    const env = { ...world.env, MMAUTH_CLIENT_SECRET: undefined, MMAUTH_CLIENT_ID: undefined };
    const before = world.emulator.requests.length;
    const result = await runCli(['client-credentials', '--client-id', 'another-client', '--replace'], { env });
    expect(result.code).not.toBe(0);
    const sent = world.emulator.requests.slice(before).map((request) => JSON.stringify(request));
    expect(sent.join('\n')).not.toContain(secret);
  });
});

describe('revoke never claims what it cannot show', () => {
  it('revoke of an expired token: exit 0, revoked false, already_invalid true, forgotten, no "Revoked" line', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 60, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    emulator.advanceSeconds(120);
    const result = await runCli(['revoke', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      schema_version: 1,
      revoked: false,
      confirmed: false,
      already_invalid: true,
      token_forgotten: true,
      profile: 'default',
    });
    // The words of this case: messages.test.ts ("logout of an expired token is not confirmed").
    expect(summaryLines(result.stderr)).toEqual([]);
  });

  it('after the server ends a grant: api exits 4, then token exits 4 with nothing on stdout, and one logout exits 0', async () => {
    const world = await startWorld();
    expect((await runCli(['login'], { env: world.env })).code).toBe(0);
    const accessToken = config(world.configDir).profiles.default?.token?.access_token ?? '';
    world.emulator.state.revokeToken(accessToken);
    const api = await runCli(['api', '/api/me'], { env: world.env });
    expect(api.code).toBe(4);
    const token = await runCli(['token'], { env: world.env });
    expect(token.code).toBe(4);
    expect(token.stdout).toBe('');
    const status = await runCli(['status', '--json'], { env: world.env });
    expect(status.stdout).not.toContain(accessToken);
    const logout = await runCli(['logout', '--json'], { env: world.env });
    expect(logout.code, logout.stderr).toBe(0);
  });

  it.each([true, false])(
    'logout (--json: %s) of a grant the server ended while the access token is still held: one run, exit 0, "already ended"',
    async (isJson) => {
      const args = isJson ? ['--json'] : [];
      const world = await startWorld();
      expect((await runCli(['login'], { env: world.env })).code).toBe(0);
      world.emulator.state.revokeToken(config(world.configDir).profiles.default?.token?.access_token ?? '');
      const logout = await runCli(['logout', ...args], { env: world.env });
      expect(logout.code, logout.stderr).toBe(0);
      if (!isJson) {
        expect(logout.stderr).toContain('The server had already ended this grant');
      } else {
        expect(JSON.parse(logout.stdout)).toMatchObject({ logged_out: true, revoked: false, already_invalid: true });
        expect(summaryLines(logout.stderr)).toEqual([]);
      }
    },
  );
});

describe('what the report found besides the chain', () => {
  it('--redirect-uri with port 0: exit 2 invalid_redirect_uri before anything is sent', async () => {
    const world = await startWorld();
    const before = world.gate.seen.length;
    const result = await runCli(['login', '--redirect-uri', 'http://127.0.0.1:0/cb', '--json'], { env: world.env });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error.code).toBe('invalid_redirect_uri');
    expect(world.gate.seen.slice(before)).toEqual([]);
  });

  it('status --check with one of two servers down lists both profiles; the down one is unreachable; exit 3 when it is the selected one', async () => {
    const up = await startWorld();
    const down = await startTestEmulator();
    const env = { ...up.env, MMAUTH_BASE_URL: undefined };
    expect((await runCli(['client-credentials', '--base-url', up.gate.baseUrl, '--profile', 'up'], { env })).code).toBe(
      0,
    );
    const downEnv = { ...env, MMAUTH_CLIENT_ID: down.client.clientId, MMAUTH_CLIENT_SECRET: down.client.clientSecret };
    expect(
      (await runCli(['client-credentials', '--base-url', down.baseUrl, '--profile', 'down'], { env: downEnv })).code,
    ).toBe(0);
    await down.close();
    const result = await runCli(['status', '--check', '--json', '--timeout', '5'], {
      env: { ...env, MMAUTH_PROFILE: 'up' },
    });
    expect(result.code, result.stderr).toBe(0);
    const profiles = JSON.parse(result.stdout).profiles as Array<{ name: string; check: string }>;
    expect(profiles.map(({ name, check }) => [name, check]).sort()).toEqual([
      ['down', 'unreachable'],
      ['up', 'active'],
    ]);
    const selectedDown = await runCli(['status', '--check', '--timeout', '5'], {
      env: { ...env, MMAUTH_PROFILE: 'down' },
    });
    expect(selectedDown.code).toBe(3);
    expect(selectedDown.stderr).toContain('up');
    expect(selectedDown.stderr).toContain('its server could not be reached');
  });
});

describe('--verbose traces every exchange of the command, renewal included', () => {
  it.each([['token'], ['header'], ['refresh'], ['api', '/api/me']])(
    '%s --verbose on a stale token shows the token endpoint and the chain presentation, redacted',
    async (...args) => {
      const world = await startWorld();
      expect((await runCli(['login'], { env: world.env })).code).toBe(0);
      makeStale(world.configDir);
      const refreshToken = config(world.configDir).profiles.default?.token?.refresh_token ?? '';
      const result = await runCli([...args, '--verbose'], { env: world.env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/POST \S+\/oauth2\/token/);
      expect(result.stderr).toMatch(/GET \S+\/oauth2\/token\/info/);
      expect(result.stderr).not.toContain(refreshToken);
      expect(result.stderr).not.toContain(world.emulator.client.clientSecret);
    },
  );
});
