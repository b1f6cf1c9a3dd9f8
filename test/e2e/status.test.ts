import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator, storedAccessToken } from '../support/emulator.js';
import { inS, storedToken as token, writeProfiles } from '../support/profiles.js';

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

    // MMAUTH_PROFILE selects and lists every profile; --profile would show that profile only.
    const ci = await runCli(['status', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_PROFILE: 'ci' } });
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
    // When each token was obtained (runners sharing a client compare these).
    expect(Math.abs(Date.parse(status.profiles[0].obtained_at) - Date.now())).toBeLessThan(120_000);
    expect(ci.stdout).not.toContain(storedAccessToken(configDir, 'ci'));

    const human = await runCli(['status'], { env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_PROFILE: 'pat' } });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain(`Config file: ${join(configDir, 'config.json')}`);
    expect(human.stderr).toMatch(/▸ pat \(selected\)/);
    expect(human.stderr).toMatch(/obtained: +\S+ \(\d+[dhms]\S* ago\)/);
    expect(human.stderr).toMatch(/token:\s+valid \(by its expiry; not checked\), \d+h( \d+m)? left \(until /);
    expect(human.stderr).toMatch(/token:\s+valid \(no expiry; not checked\)/);
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

describe('mmauth status --check', () => {
  it('asks token info about each stored token: active, or refused once revoked on the server (exit 4 for the selected one)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['client-credentials', '--profile', 'a'], { env })).code).toBe(0);
    expect((await runCli(['client-credentials', '--profile', 'b'], { env })).code).toBe(0);
    const plain = await runCli(['status', '--json'], { env: { ...env, MMAUTH_PROFILE: 'a' } });
    expect(JSON.parse(plain.stdout).profiles.map((p: { check: unknown }) => p.check)).toEqual([null, null]);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token/info')).toHaveLength(0);

    const tokenB = (await runCli(['token', '--profile', 'b'], { env })).stdout.trim();
    emulator.state.revokeToken(tokenB);
    const checked = await runCli(['status', '--check', '--json'], { env: { ...env, MMAUTH_PROFILE: 'a' } });
    expect(checked.code).toBe(0);
    expect(JSON.parse(checked.stdout).profiles.map((p: { name: string; check: unknown }) => [p.name, p.check])).toEqual(
      [
        ['a', 'active'],
        ['b', 'refused'],
      ],
    );
    const human = await runCli(['status', '--check'], { env: { ...env, MMAUTH_PROFILE: 'b' } });
    expect(human.code).toBe(4);
    expect(human.stderr).toMatch(/token:\s+active \(token info accepts it\)/);
    expect(human.stderr).toMatch(/token:\s+refused by token info/);
  });
});
