import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, summaryLines } from '../support/cli.js';
import type { EmulatorOptions } from '../../src/emulator/index.js';
import { readConfig, readConfigText, startTestEmulator, storedAccessToken } from '../support/emulator.js';

interface StoredConfig {
  profiles: Record<string, { token?: { access_token: string }; client_secret?: string; base_url?: string }>;
}

/** An emulator, a config dir holding a client credentials token, and the config file's text then. */
async function withStoredToken(options: EmulatorOptions = {}) {
  const emulator = await startTestEmulator(options);
  const configDir = makeConfigDir();
  const env = emulator.env(configDir);
  expect((await runCli(['client-credentials'], { env })).code).toBe(0);
  return { emulator, configDir, env, before: readConfigText(configDir) };
}

describe('mmauth revoke', () => {
  it('revokes, confirms with token info, forgets the token and keeps the settings; info then exits 4', async () => {
    const { emulator, configDir, env } = await withStoredToken();
    const token = storedAccessToken(configDir);

    const result = await runCli(['revoke', '--json'], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      schema_version: 1,
      revoked: true,
      confirmed: true,
      already_invalid: false,
      token_forgotten: true,
      profile: 'default',
    });
    expect(summaryLines(result.stderr)).toEqual([]);
    const revokeRequest = new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/revoke')?.body);
    expect(revokeRequest.get('token')).toBe(token);
    expect(revokeRequest.get('client_id')).toBe('mmauth-demo');
    expect(revokeRequest.get('client_secret')).toBe(emulator.client.clientSecret);

    const stored = (readConfig(configDir) as StoredConfig).profiles.default;
    expect(stored?.token).toBeUndefined();
    expect(stored).toMatchObject({ base_url: emulator.baseUrl, client_secret: emulator.client.clientSecret });

    expect((await runCli(['info'], { env })).code).toBe(4);
    const direct = await runCli(['info'], { env: { ...env, MMAUTH_TOKEN: token } });
    expect(direct.code).toBe(4);
    expect(direct.stderr).toContain('token is expired, revoked or invalid');
  });

  it('with a wrong secret the spec server answers 200 but the token lives: exit 4, NOT revoked, token kept', async () => {
    const { configDir, env, before } = await withStoredToken();
    const result = await runCli(['revoke'], { env: { ...env, MMAUTH_CLIENT_SECRET: 'wrong' } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('the token was NOT revoked');
    expect(readConfigText(configDir)).toBe(before);
    expect((await runCli(['info'], { env })).code).toBe(0);
  });

  it('with a wrong secret Doorkeeper 5 answers 403 unauthorized_client: exit 4, token kept', async () => {
    const { configDir, env, before } = await withStoredToken({ flavor: 'doorkeeper5' });
    const result = await runCli(['revoke'], { env: { ...env, MMAUTH_CLIENT_SECRET: 'wrong' } });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/NOT revoked.*403.*unauthorized_client/);
    expect(readConfigText(configDir)).toBe(before);
  });

  it('exits 4 "not logged in" with no stored token and sends nothing', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['revoke'], { env: emulator.env(makeConfigDir()) });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('not logged in');
    expect(emulator.requests).toHaveLength(0);
  });
});
