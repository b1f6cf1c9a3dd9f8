import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';

describe('mmauth login --with-token (personal access token from stdin)', () => {
  it('checks the token with token info and stores it as grant "personal" with its scopes and no expiry', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--with-token', '--json'], {
      env: emulator.env(configDir, { MMAUTH_CLIENT_ID: undefined, MMAUTH_CLIENT_SECRET: undefined }),
      input: `${emulator.personalAccessToken}\n`,
    });
    expect(summaryLines(result.stderr)).toEqual([]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      grant: 'personal',
      scope: 'service userinfo.email',
      expires_in: null,
      expires_at: null,
    });
    expect(result.stderr).not.toContain(emulator.personalAccessToken);
    const info = emulator.requests.filter((r) => r.url === '/oauth2/token/info');
    expect(info).toHaveLength(1);
    expect(info[0]?.headers.authorization).toBe(`Bearer ${emulator.personalAccessToken}`);
    expect(readConfig(configDir)).toMatchObject({
      profiles: {
        default: {
          base_url: emulator.baseUrl,
          token: { access_token: emulator.personalAccessToken, grant: 'personal', scope: 'service userinfo.email' },
        },
      },
    });

    const token = await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(token).toMatchObject({ code: 0, stdout: `${emulator.personalAccessToken}\n` });
  });

  it('refuses a token the server does not know: exit 4, nothing stored', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--with-token'], {
      env: emulator.env(configDir),
      input: 'not-a-real-token-0123456789\n',
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/refuses this token: expired, revoked or mistyped/);
    expect(result.stderr).toContain("make a new personal access token in the service's settings");
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('with --no-verify stores the token without a request, and warns', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--with-token', '--no-verify'], {
      env: emulator.env(configDir),
      input: 'unchecked-token-0123456789\n',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('--no-verify');
    expect(emulator.requests).toHaveLength(0);
    expect(readConfig(configDir)).toMatchObject({
      profiles: { default: { token: { access_token: 'unchecked-token-0123456789', grant: 'personal' } } },
    });
  });

  it.each([
    ['empty stdin', ['login', '--with-token'], '', /no token on standard input/],
    ['two tokens', ['login', '--with-token'], 'one two\n', /several words or lines/],
    ['--with-token with --implicit', ['login', '--with-token', '--implicit'], 'tok\n', /takes no --implicit/],
    ['--no-verify without --with-token', ['login', '--no-verify'], '', /only applies to --with-token/],
  ])('%s: exit 2, no request', async (_name, args, input, message) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(args, { env: emulator.env(configDir), input });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(emulator.requests).toHaveLength(0);
    expect(readConfigText(configDir)).toBeUndefined();
  });
});
