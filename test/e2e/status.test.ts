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
