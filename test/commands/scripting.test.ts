import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator, storedAccessToken } from '../support/emulator.js';

/** Writes a config file with the given profiles (on-disk form), the way mmauth would have. */
function writeProfiles(configDir: string, profiles: Record<string, unknown>): void {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
}

const inS = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const token = (accessToken: string, expiresAt: string | undefined, grant = 'authorization_code') => ({
  access_token: accessToken,
  token_type: 'bearer',
  grant,
  obtained_at: inS(-60),
  scope: 'service',
  ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
});

describe('mmauth token and mmauth header', () => {
  it.each([
    ['no profile at all', {}, [], /not logged in: profile "default" has no stored token/],
    ['a profile without a token', { default: { base_url: 'http://127.0.0.1:1' } }, [], /not logged in/],
    ['an expired token', { default: { token: token('expired-token-000000000000', inS(-5)) } }, [], /expired at \d{4}-/],
    [
      'less than --min-ttl left',
      { default: { token: token('short-token-0000000000000', inS(100)) } },
      ['--min-ttl', '600'],
      /has \d+ s left, less than --min-ttl 600/,
    ],
  ])('%s: exit 4 and nothing on stdout', async (_name, profiles, extra, message) => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, profiles);
    for (const command of ['token', 'header']) {
      const result = await runCli([command, ...extra], { env: { MMAUTH_CONFIG_DIR: configDir } });
      expect(result.stderr).toMatch(message);
      expect(result.code).toBe(4);
      expect(result.stdout).toBe('');
    }
  });

  it('prints the bare token and a newline; --min-ttl below the time left passes; a token with no expiry always passes', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      default: { token: token('valid-token-0000000000000', inS(3600)) },
      pat: { token: token('forever-token-00000000000', undefined, 'personal') },
    });
    expect(await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir } })).toMatchObject({
      code: 0,
      stdout: 'valid-token-0000000000000\n',
      stderr: '',
    });
    expect(await runCli(['token', '--min-ttl', '600'], { env: { MMAUTH_CONFIG_DIR: configDir } })).toMatchObject({
      code: 0,
      stdout: 'valid-token-0000000000000\n',
    });
    expect(
      await runCli(['token', '--profile', 'pat', '--min-ttl', '999999'], { env: { MMAUTH_CONFIG_DIR: configDir } }),
    ).toMatchObject({ code: 0, stdout: 'forever-token-00000000000\n' });
    const json = await runCli(['token', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(JSON.parse(json.stdout)).toMatchObject({
      access_token: 'valid-token-0000000000000',
      grant: 'authorization_code',
      profile: 'default',
    });
    expect(JSON.parse(json.stdout).expires_in).toBeGreaterThan(3590);
  });

  it('header prints "Authorization: Bearer <token>", or a headers object with --json', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { work: { token: token('work-token-00000000000000', inS(3600)) } });
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_PROFILE: 'work' };
    expect(await runCli(['header'], { env })).toMatchObject({
      code: 0,
      stdout: 'Authorization: Bearer work-token-00000000000000\n',
    });
    expect(JSON.parse((await runCli(['header', '--json'], { env })).stdout)).toEqual({
      Authorization: 'Bearer work-token-00000000000000',
    });
  });

  it('MMAUTH_TOKEN wins over the stored token', async () => {
    const configDir = makeConfigDir();
    expect(
      await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_TOKEN: 'from-env-000000000000000' } }),
    ).toMatchObject({ code: 0, stdout: 'from-env-000000000000000\n' });
    expect(
      await runCli(['header'], { env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_TOKEN: 'from-env-000000000000000' } }),
    ).toMatchObject({ code: 0, stdout: 'Authorization: Bearer from-env-000000000000000\n' });
  });

  it('a token obtained from the emulator is the one token prints and the server accepts', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    const printed = await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(printed.stdout).toBe(`${storedAccessToken(configDir)}\n`);
    const header = (await runCli(['header'], { env: { MMAUTH_CONFIG_DIR: configDir } })).stdout.trim();
    const [name, value] = header.split(': ');
    const answer = await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { [name ?? '']: value ?? '' } });
    expect(answer.status).toBe(200);
  });
});

describe('mmauth status over several profiles', () => {
  it('lists every profile with its state and the config file; exit follows the selected profile', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect(
      (
        await runCli(['client-credentials', '--profile', 'ci', '--scope', 'service userinfo.profile'], {
          env: emulator.env(configDir),
        })
      ).code,
    ).toBe(0);
    const pat = await runCli(['login', '--with-token', '--profile', 'pat'], {
      env: emulator.env(configDir),
      input: emulator.personalAccessToken,
    });
    expect(pat.code).toBe(0);

    const ci = await runCli(['status', '--profile', 'ci', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(ci.code).toBe(0);
    const status = JSON.parse(ci.stdout);
    expect(status).toMatchObject({
      config_file: join(configDir, 'config.json'),
      selected: 'ci',
      profiles: [
        {
          name: 'ci',
          selected: true,
          base_url: emulator.baseUrl,
          client_id: 'mmauth-demo',
          grant: 'client_credentials',
          scope: 'service userinfo.profile',
          state: 'valid',
          has_client_secret: true,
        },
        {
          name: 'pat',
          selected: false,
          grant: 'personal',
          state: 'no_expiry',
          expires_in: null,
          expires_at: null,
          has_client_secret: false,
        },
      ],
    });
    expect(status.profiles[0].expires_in).toBeGreaterThan(7100);
    expect(ci.stdout).not.toContain(storedAccessToken(configDir, 'ci'));

    const human = await runCli(['status', '--profile', 'pat'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain(`Config file: ${join(configDir, 'config.json')}`);
    expect(human.stderr).toMatch(/▸ pat \(selected\)/);
    expect(human.stderr).toMatch(/token:\s+valid, \d+h( \d+m)? left \(until /);
    expect(human.stderr).toMatch(/token:\s+valid, no expiry/);
    expect(human.stderr).not.toContain(emulator.personalAccessToken);

    // The default profile does not exist: exit 4, but the listing is still printed.
    const none = await runCli(['status', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('the selected profile "default" does not exist');
    expect(JSON.parse(none.stdout).profiles).toHaveLength(2);
  });

  it('shows an expired token as expired and exits 4', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      default: { base_url: 'http://127.0.0.1:1', token: token('old-token-00000000000000', inS(-60)) },
    });
    const result = await runCli(['status', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout).profiles[0]).toMatchObject({ state: 'expired', expires_in: 0 });
    expect(result.stderr).toContain('has an expired token');
  });
});

describe('mmauth logout over several profiles', () => {
  it("revokes and forgets the selected profile's token only; the server refuses it afterwards", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    for (const profile of ['default', 'ci']) {
      expect((await runCli(['client-credentials', '--profile', profile], { env: emulator.env(configDir) })).code).toBe(
        0,
      );
    }
    const revokedToken = storedAccessToken(configDir, 'ci');
    const keptToken = storedAccessToken(configDir);

    const result = await runCli(['logout', '--profile', 'ci', '--json'], {
      env: emulator.env(configDir, { MMAUTH_CLIENT_SECRET: undefined }),
    });
    expect(result.stderr).toContain('Logged out of profile "ci"');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ logged_out: true, revoked: true, confirmed: true, profile: 'ci' });
    expect(emulator.requests.filter((r) => r.url === '/oauth2/revoke')).toHaveLength(1);
    const config = readConfig(configDir) as { profiles: Record<string, { token?: unknown; client_id?: string }> };
    expect(config.profiles.ci?.token).toBeUndefined();
    expect(config.profiles.ci?.client_id).toBe('mmauth-demo');
    expect(storedAccessToken(configDir)).toBe(keptToken);

    const dead = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `Bearer ${revokedToken}` },
    });
    expect(dead.status).toBe(401);
    const alive = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `Bearer ${keptToken}` },
    });
    expect(alive.status).toBe(200);

    const again = await runCli(['logout', '--profile', 'ci'], { env: emulator.env(configDir) });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('nothing to log out');
  });

  it('--local-only forgets the token without a request; the token stays valid on the server', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    const accessToken = storedAccessToken(configDir);
    const before = emulator.requests.length;
    const result = await runCli(['logout', '--local-only'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stays valid until it expires');
    expect(emulator.requests.length).toBe(before);
    expect(() => storedAccessToken(configDir)).toThrow();
    const alive = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(alive.status).toBe(200);
  });

  it('keeps the token when the server cannot be reached, and suggests --local-only', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    const before = readConfigText(configDir);
    await emulator.close();
    const result = await runCli(['logout'], { env: emulator.env(configDir) });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('connection refused');
    expect(result.stderr).toContain('--local-only');
    expect(readConfigText(configDir)).toBe(before);
  });

  it('forgets a personal access token without trying to revoke it with the client', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect(
      (await runCli(['login', '--with-token'], { env: emulator.env(configDir), input: emulator.personalAccessToken }))
        .code,
    ).toBe(0);
    const result = await runCli(['logout'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('can only be revoked where it was created');
    expect(emulator.requests.some((r) => r.url === '/oauth2/revoke')).toBe(false);
  });
});

describe('no TTY (or CI=true): never a prompt, exit 2 naming the flag and the variable', () => {
  it.each([
    ['base URL', ['info'], { MMAUTH_BASE_URL: undefined }, ['--base-url', 'MMAUTH_BASE_URL']],
    ['client id', ['client-credentials'], { MMAUTH_CLIENT_ID: undefined }, ['--client-id', 'MMAUTH_CLIENT_ID']],
    [
      'client secret',
      ['client-credentials'],
      { MMAUTH_CLIENT_SECRET: undefined },
      ['--client-secret-file', 'MMAUTH_CLIENT_SECRET'],
    ],
    [
      'client secret under CI=true',
      ['login', '--no-browser'],
      { MMAUTH_CLIENT_SECRET: undefined, CI: 'true' },
      ['CI is set', 'MMAUTH_CLIENT_SECRET'],
    ],
  ])('missing %s', async (_what, args, env, mentions) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(args, {
      env: emulator.env(configDir, { MMAUTH_TOKEN: 'x'.repeat(20), ...env }),
      timeoutMs: 10_000,
    });
    expect(result.code).toBe(2);
    for (const mention of mentions) expect(result.stderr).toContain(mention);
    expect(result.stderr).not.toMatch(/^\?/m);
    expect(result.stdout).toBe('');
    expect(emulator.requests).toHaveLength(0);
  });
});
