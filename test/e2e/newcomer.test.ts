/**
 * What a new user tripped over (issue 25), each tried again as it was: the message or document
 * the user now gets, as an inline snapshot where it is a message.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';

describe('what a new user tripped over', () => {
  it('1: `token --profile X` with its server down names the profile and how to point it elsewhere, not --base-url', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      work: {
        base_url: 'http://127.0.0.1:1',
        client_id: 'app',
        token: { ...storedToken('a'.repeat(43), inS(-10)), refresh_token: 'r'.repeat(43) },
      },
    });
    const result = await runCli(['token', '--profile', 'work', '--timeout', '2'], {
      env: { MMAUTH_CONFIG_DIR: configDir },
    });
    expect(result.code).toBe(3);
    expect(result.stderr.split('\n')[1]).toMatchInlineSnapshot(
      `"  check that the server of profile "work" is running; to point the profile elsewhere: mmauth profile set work --base-url URL"`,
    );
  });

  it('6: an unknown word gets "see `mmauth --help`"; a typo still gets "Did you mean"', async () => {
    const lost = await runCli(['nosuchcommand']);
    expect(lost.code).toBe(2);
    expect(lost.stderr).toMatchInlineSnapshot(`
      "error: unknown command 'nosuchcommand'
        see \`mmauth --help\` for the commands
      "
    `);
    const typo = await runCli(['tokn']);
    expect(typo.stderr).toContain('Did you mean token?');
    expect(typo.stderr).not.toContain('mmauth --help');
    // An option before the command (gh and git take some there): where it goes instead.
    const before = await runCli(['--profile', 'work', 'token']);
    expect(before.code).toBe(2);
    expect(before.stderr).toContain('options go after the command: mmauth token --profile');
    const misspelt = await runCli(['token', '--profle', 'work']);
    expect(misspelt.stderr).toContain('Did you mean --profile?');
    expect(misspelt.stderr).not.toContain('options go after the command');
  });

  it('8: running bin/ before the build says to run npm ci, in one line, no stack', () => {
    const copy = mkdtempSync(join(tmpdir(), 'mmauth-unbuilt-'));
    onTestFinished(() => rmSync(copy, REMOVE_TREE));
    cpSync(resolve(import.meta.dirname, '../../bin'), join(copy, 'bin'), { recursive: true });
    const result = spawnSync(process.execPath, [join(copy, 'bin', 'mmauth.cjs'), 'token'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatchInlineSnapshot(`
      "error: mmauth is not built yet: run \`npm ci\` (or \`npm run build\`) in its directory first
      "
    `);
  });

  it('9: logout of a personal token says it whole: forgotten here, valid on the server until revoked there', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = { ...emulator.env(configDir), MMAUTH_CLIENT_SECRET: undefined, MMAUTH_CREDENTIAL_STORE: 'file' };
    expect((await runCli(['login', '--with-token'], { env, input: emulator.personalAccessToken })).code).toBe(0);
    const result = await runCli(['logout'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr.split('\n')[0]).toMatchInlineSnapshot(
      `"! a personal access token can only be revoked where it was created (the service's settings): it is forgotten here, and stays valid on the server until you revoke it there"`,
    );
  });

  it('12: status of a personal token: "valid (no expiry; not checked)"', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      pat: { base_url: 'http://127.0.0.1:1', token: storedToken('p'.repeat(43), undefined, 'personal') },
    });
    const result = await runCli(['status', '--profile', 'pat'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.stderr).toMatch(/token:\s+valid \(no expiry; not checked\)   pppp…pppp/);
  });

  it('15: info renews a locally stale token first, as token and api do; --no-renew does not', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = { ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }), MMAUTH_CREDENTIAL_STORE: 'file' };
    expect((await runCli(['login'], { env })).code).toBe(0);
    const config = readConfig(configDir) as { profiles: Record<string, { token: Record<string, string> }> };
    const token = config.profiles.default?.token;
    if (token === undefined) throw new Error('no token');
    token.obtained_at = new Date(Date.now() - 3 * 3_600_000).toISOString();
    token.expires_at = new Date(Date.now() - 3_600_000).toISOString();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const before = token.access_token;
    const stored = () =>
      (readConfig(configDir) as { profiles: Record<string, { token: Record<string, string> }> }).profiles.default?.token
        .access_token;
    // --no-renew asks about the stored token as it is (the server, with its own clock, still accepts it).
    expect((await runCli(['info', '--no-renew'], { env })).code).toBe(0);
    expect(stored()).toBe(before);
    const renewed = await runCli(['info', '--json'], { env });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(stored()).not.toBe(before);
    // 19: every time is ISO 8601 UTC, created_at included.
    expect(JSON.parse(renewed.stdout).created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('16: refresh on a profile that cannot renew says so (not_renewable), even before it expires', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      imp: {
        base_url: 'http://127.0.0.1:1',
        client_id: 'app',
        token: storedToken('i'.repeat(43), inS(3600), 'implicit'),
      },
    });
    const result = await runCli(['refresh', '--profile', 'imp', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout).error).toMatchInlineSnapshot(`
      {
        "code": "not_renewable",
        "exit_code": 4,
        "hint": "get a new one: mmauth login --implicit --profile imp",
        "message": "the token of profile "imp" cannot be renewed: an implicit-flow token without a refresh token cannot be renewed",
      }
    `);
  });

  it('21: client-credentials --no-save --json reports "profile": null', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['client-credentials', '--no-save', '--json'], { env: emulator.env(makeConfigDir()) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ profile: null, replaced: null });
  });
});

describe('a base URL with a wrong path (3)', () => {
  it('login (probe 404) and client-credentials (token endpoint 404, even with a JSON body) name the base URL and its path; oauth_error stays empty', async () => {
    const { startHostileServer, json } = await import('../support/hostile-server.js');
    const server = await startHostileServer({
      'GET /wrong/oauth2/authorize': (_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
      },
      'POST /wrong/oauth2/token': json({ status: 404, error: 'Not Found' }, 404),
    });
    const env = {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: `${server.baseUrl}/wrong`,
      MMAUTH_CLIENT_ID: 'app',
      MMAUTH_CLIENT_SECRET: 'secret-secret-secret',
    };
    for (const args of [
      ['login', '--no-browser', '--json'],
      ['client-credentials', '--json'],
    ]) {
      const result = await runCli(args, { env });
      const error = JSON.parse(result.stdout).error as Record<string, unknown>;
      expect(error.oauth_error).toBeUndefined();
      expect(error.hint).toMatchInlineSnapshot(
        `"check the base URL and its path (--base-url, MMAUTH_BASE_URL or the profile's): the endpoints are under {base}/oauth2/"`,
      );
    }
  });
});

describe('a secret given to login is stored whatever the flow (17)', () => {
  it('login --implicit with MMAUTH_CLIENT_SECRET stores it (never sends it in the authorization URL); logout then needs it no more', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = { ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }), MMAUTH_CREDENTIAL_STORE: 'file' };
    const login = await runCli(['login', '--implicit'], { env });
    expect(login.code, login.stderr).toBe(0);
    const authorize = emulator.requests.find((r) => r.url.startsWith('/oauth2/authorize?'));
    expect(authorize?.url).not.toContain(emulator.client.clientSecret);
    const stored = readConfig(configDir) as { profiles: Record<string, { client_secret?: string }> };
    expect(stored.profiles.default?.client_secret).toBe(emulator.client.clientSecret);
    const logout = await runCli(['logout'], { env: { ...env, MMAUTH_CLIENT_SECRET: undefined } });
    expect(logout.code, logout.stderr).toBe(0);
  });
});

describe('the plain-text notice (18)', () => {
  it('at most two short lines, once per profile: login --start says it, login --complete does not again', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const env = emulator.env(makeConfigDir());
    const start = await runCli(['login', '--start', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const lines = start.stderr.split('\n');
    const at = lines.findIndex((line) => line.includes('plain text'));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at]?.length ?? 0).toBeLessThan(200);
    expect(lines[at + 1]).toContain('MMAUTH_CREDENTIAL_STORE=file');
    const url = (JSON.parse(start.stdout) as { authorization_url: string }).authorization_url;
    const redirect = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const complete = await runCli(['login', '--complete', redirect], { env });
    expect(complete.code, complete.stderr).toBe(0);
    expect(complete.stderr).not.toContain('plain text');
  });
});

describe('a failing BROWSER command (5)', () => {
  it('BROWSER=false is reported at once (never "Opened it"), the URL to open by hand; the timeout hint says the browser never came back', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--wait', '2'], { env: emulator.env(makeConfigDir(), { BROWSER: 'false' }) });
    expect(result.code).toBe(3);
    expect(result.stderr).not.toContain('Opened it with');
    expect(result.stderr).toContain('the BROWSER command failed (exit 1): open the URL above yourself; still waiting');
    expect(
      result.stderr.split('\n').find((line) => line.startsWith('  ') && line.includes('never came back')),
    ).toMatchInlineSnapshot(
      `"  the server accepted the request (the probe saw its sign-in page), but the browser never came back to the redirect URI: finish signing in there, or paste the address it ended on; raise --wait SECONDS for more time"`,
    );
  });
});

describe('login --start --implicit (10)', () => {
  it('prints the same deprecation warning as the one-step --implicit, and says the browser ends on #…', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--start', '--implicit'], { env: emulator.env(makeConfigDir()) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('the implicit flow is deprecated (RFC 9700 §2.1.2');
    expect(result.stderr).toMatch(/ends on http:\/\/127\.0\.0\.1:\d+\/callback#…/);
  });
});

describe("doctor's fixes (4)", () => {
  it('name only flags doctor accepts (a refused client id: --client-id, never --redirect-uri or --scope)', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['doctor', '--client-id', 'no-such-client', '--json'], {
      env: emulator.env(makeConfigDir(), { MMAUTH_CLIENT_ID: undefined }),
    });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { checks: Array<{ name: string; status: string; fix?: string }> };
    expect(report.checks.find((check) => check.name === 'authorization')).toMatchObject({ status: 'fail' });
    const doctorFlags = ['--profile', '--base-url', '--client-id', '--timeout', '--json', '--verbose'];
    for (const { fix } of report.checks) {
      // A flag inside a quoted command (`mmauth login --profile x`) belongs to that command.
      const named = (fix ?? '').replace(/`[^`]*`/g, '').match(/--[a-z-]+/g) ?? [];
      for (const flag of named) expect(doctorFlags, fix).toContain(flag);
    }
  });
});
