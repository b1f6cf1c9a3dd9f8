/**
 * Stored credentials are bound to the origin of their profile's base URL: no command sends a
 * stored token or client secret anywhere else, whether --base-url or MMAUTH_BASE_URL names the
 * other server. A listening fixture on another port must not even see a connection.
 */
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { readConfigText, startTestEmulator } from '../support/emulator.js';
import { startListeningFixture } from '../support/listening-fixture.js';

const COMMANDS: string[][] = [
  ['token'],
  ['header'],
  ['info'],
  ['revoke'],
  ['logout'],
  ['client-credentials'],
  ['client-credentials', '--no-save'],
  ['login', '--no-browser', '--wait', '2'],
];

async function profileOnServerA() {
  const emulator = await startTestEmulator();
  const configDir = makeConfigDir();
  const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_PROFILE: 'a' };
  const stored = await runCli(['client-credentials', '--base-url', emulator.baseUrl, '--client-id', 'mmauth-demo'], {
    env: { ...env, MMAUTH_CLIENT_SECRET: emulator.client.clientSecret },
  });
  expect(stored.code, stored.stderr).toBe(0);
  return { emulator, configDir, env };
}

describe('credentials stay with their server', () => {
  it.each(COMMANDS)(
    '%s … with another server: exit 2 naming both URLs and --profile; nothing connects there',
    async (...args) => {
      const { emulator, configDir, env } = await profileOnServerA();
      const fixture = await startListeningFixture();
      const before = readConfigText(configDir);
      // token and header take no --base-url: only MMAUTH_BASE_URL can point them elsewhere.
      const ways = args[0] === 'token' || args[0] === 'header' ? (['env'] as const) : (['flag', 'env'] as const);
      for (const how of ways) {
        const result = await runCli(how === 'flag' ? [...args, '--base-url', fixture.baseUrl] : args, {
          env: how === 'flag' ? env : { ...env, MMAUTH_BASE_URL: fixture.baseUrl },
          timeoutMs: 10_000,
        });
        expect(result.code, `${how}: ${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(
          `profile "a" holds credentials for ${emulator.baseUrl}; refusing to send them to ${fixture.baseUrl}`,
        );
        expect(result.stderr).toContain('--profile');
        expect(result.stdout).toBe('');
      }
      expect(fixture.connections()).toBe(0);
      expect(readConfigText(configDir)).toBe(before);
    },
  );

  it('a secret or token given for this run may go to the URL given for this run', async () => {
    const { configDir, env } = await profileOnServerA();
    const other = await startTestEmulator();
    const info = await runCli(['info', '--base-url', other.baseUrl], {
      env: { ...env, MMAUTH_TOKEN: other.personalAccessToken },
    });
    expect(info.code, info.stderr).toBe(0);
    const noSave = await runCli(['client-credentials', '--no-save', '--base-url', other.baseUrl], {
      env: { ...env, MMAUTH_CLIENT_SECRET: other.client.clientSecret },
    });
    expect(noSave.code, noSave.stderr).toBe(0);
    expect(other.requests.map((r) => r.url)).toEqual(['/oauth2/token/info', '/oauth2/token']);
    expect(readConfigText(configDir)).toContain('"a"');
  });

  it('--replace rebinds the profile to the new server and drops the old credentials', async () => {
    const { emulator, configDir, env } = await profileOnServerA();
    const other = await startTestEmulator();
    const result = await runCli(['client-credentials', '--replace', '--base-url', other.baseUrl], {
      env: { ...env, MMAUTH_CLIENT_SECRET: other.client.clientSecret },
    });
    expect(result.code, result.stderr).toBe(0);
    const text = readConfigText(configDir) ?? '';
    expect(text).toContain(other.baseUrl);
    expect(text).not.toContain(emulator.client.clientSecret);
  });

  it('a user token is not silently replaced by a client token in the same profile (and the reverse)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = await runCli(['login'], { env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) });
    expect(login.code, login.stderr).toBe(0);
    const before = readConfigText(configDir);
    const clientToken = await runCli(['client-credentials'], { env: emulator.env(configDir) });
    expect(clientToken.code).toBe(2);
    expect(clientToken.stderr).toContain(
      'profile "default" holds a user token (authorization_code); refusing to replace it with a client token',
    );
    expect(clientToken.stderr).toMatch(/--profile NAME.*--replace/);
    expect(readConfigText(configDir)).toBe(before);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
    const replaced = await runCli(['client-credentials', '--replace'], { env: emulator.env(configDir) });
    expect(replaced.code, replaced.stderr).toBe(0);
    const back = await runCli(['login'], { env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) });
    expect(back.code).toBe(2);
    expect(back.stderr).toContain(
      'holds a client token (client_credentials); refusing to replace it with a user token',
    );
  });
});
