/**
 * Public clients (RFC 6749 §2.1; RFC 8252 §8.4: native apps are public clients): with no secret from
 * any source, the code flow runs on PKCE and client_id alone, and revoke and logout send client_id
 * alone. A confidential client's implicit token still needs the secret to revoke: logout says so.
 */
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { readConfigText, startTestEmulator, storedAccessToken, type TestEmulator } from '../support/emulator.js';

function publicEnv(emulator: TestEmulator, configDir: string, extra: Record<string, string | undefined> = {}) {
  return emulator.env(configDir, {
    MMAUTH_CLIENT_ID: emulator.publicClient.clientId,
    MMAUTH_CLIENT_SECRET: undefined,
    BROWSER: HEADLESS_BROWSER,
    ...extra,
  });
}

describe('a public client (no secret anywhere)', () => {
  it.each(['spec', 'doorkeeper5'] as const)(
    'login with PKCE and client_id alone, then revoke with client_id alone (%s flavor)',
    async (flavor) => {
      const emulator = await startTestEmulator({ flavor });
      const configDir = makeConfigDir();
      const login = await runCli(['login'], { env: publicEnv(emulator, configDir) });
      expect(login.code, login.stderr).toBe(0);
      expect(login.stderr).not.toMatch(/Client secret/);
      const exchange = new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/token')?.body);
      expect([...exchange.keys()].sort()).toEqual(['client_id', 'code', 'code_verifier', 'grant_type', 'redirect_uri']);
      expect(exchange.get('client_id')).toBe('mmauth-public');
      expect(readConfigText(configDir)).not.toContain('client_secret');

      const token = storedAccessToken(configDir);
      const revoke = await runCli(['revoke', '--json'], { env: publicEnv(emulator, configDir) });
      expect(revoke.code, revoke.stderr).toBe(0);
      expect(JSON.parse(revoke.stdout)).toMatchObject({ revoked: true, confirmed: true });
      const revocation = new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/revoke')?.body);
      expect(Object.fromEntries(revocation)).toEqual({ token, client_id: 'mmauth-public' });
    },
  );

  it('logout of a public client’s implicit token revokes it with client_id alone', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    expect((await runCli(['login', '--implicit'], { env: publicEnv(emulator, configDir) })).code).toBe(0);
    const logout = await runCli(['logout', '--json'], { env: publicEnv(emulator, configDir) });
    expect(logout.code, logout.stderr).toBe(0);
    expect(JSON.parse(logout.stdout)).toMatchObject({ logged_out: true, revoked: true, confirmed: true });
  });

  it.each(['spec', 'doorkeeper5'] as const)(
    'logout of a confidential client’s implicit token without its secret: exit 2 saying so, the token kept (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ flavor });
      const configDir = makeConfigDir();
      const env = emulator.env(configDir, { MMAUTH_CLIENT_SECRET: undefined, BROWSER: HEADLESS_BROWSER });
      expect((await runCli(['login', '--implicit'], { env })).code).toBe(0);
      const before = readConfigText(configDir);
      const logout = await runCli(['logout'], { env });
      expect(logout.code).toBe(2);
      expect(logout.stderr).toContain('its client is confidential, and revoking it needs the client secret');
      expect(logout.stderr).toContain('MMAUTH_CLIENT_SECRET');
      expect(readConfigText(configDir)).toBe(before);
      const withSecret = await runCli(['logout'], { env: emulator.env(configDir) });
      expect(withSecret.code, withSecret.stderr).toBe(0);
    },
  );
});
