import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator, storedAccessToken } from '../support/emulator.js';

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
    expect(summaryLines(result.stderr)).toEqual([]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      schema_version: 1,
      logged_out: true,
      revoked: true,
      confirmed: true,
      already_invalid: false,
      replaced_revoked: 0,
      profile: 'ci',
    });
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
