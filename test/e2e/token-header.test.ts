import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator, storedAccessToken } from '../support/emulator.js';
import { inS, storedToken as token, writeProfiles } from '../support/profiles.js';

describe('mmauth token and mmauth header', () => {
  it.each([
    ['no profile at all', {}, [], /not logged in: there is no profile "default"; there are no profiles yet/],
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
