import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

describe('mmauth info', () => {
  it.each([
    ['spec', 1],
    ['doorkeeper5', 'mmauth-demo'],
  ] as const)('reads the %s field names of the token info record', async (flavor, uid) => {
    const emulator = await startTestEmulator({ flavor });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['client-credentials', '--scope', 'service userinfo.email'], { env })).code).toBe(0);
    const result = await runCli(['info', '--json'], { env });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ resource_owner_id: null, scope: ['service', 'userinfo.email'], application: { uid } });
    expect(json.expires_in).toBeGreaterThan(7190);
    expect(json.expires_in).toBeLessThanOrEqual(7200);
  });

  it('shows owner, scopes, lifetime, application and the masked token of a personal access token', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['info'], {
      env: emulator.env(configDir, { MMAUTH_TOKEN: emulator.personalAccessToken }),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/owner:\s+42/);
    expect(result.stderr).toMatch(/scopes:\s+service userinfo\.email/);
    expect(result.stderr).toMatch(/expires:\s+no expiry/);
    expect(result.stderr).toMatch(/application:\s+2/);
    expect(result.stderr).not.toContain(emulator.personalAccessToken);
  });

  it('shows the remaining lifetime counting down, in human and absolute form', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    emulator.advanceSeconds(3600);
    const result = await runCli(['info'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/expires:\s+(59m \d+s|1h) \(until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/);
  });

  it('exits 4 "expired, revoked or invalid" once the token has expired', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    emulator.advanceSeconds(7201);
    const result = await runCli(['info'], { env });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('token is expired, revoked or invalid');
  });

  it('exits 4 "not logged in" when the profile has no token', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['info', '--profile', 'work'], { env: emulator.env(makeConfigDir()) });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('not logged in: there is no profile "work"; there are no profiles yet');
  });

  it.each(['info', 'login', 'client-credentials', 'revoke'])(
    '%s refuses a non-loopback http:// base URL with exit 2',
    async (command) => {
      const result = await runCli([command, '--base-url', 'http://maps.example.com'], {
        env: {
          MMAUTH_CONFIG_DIR: makeConfigDir(),
          MMAUTH_CLIENT_ID: 'x',
          MMAUTH_CLIENT_SECRET: 'y',
          MMAUTH_TOKEN: 'z',
        },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('refusing plain http to maps.example.com');
    },
  );
});
