/**
 * Against a real Doorkeeper 5.5 (the service's own OAuth server): doctor on a profile that listens
 * on its own callback path, and two runners sharing one client id where each new client-credentials
 * token revokes the previous one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli } from '../support/cli.js';
import { startDoorkeeper } from '../support/doorkeeper.js';

type Json = Record<string, any>;

describe('doctor against a real Doorkeeper', () => {
  it('a profile logged in with --callback-path /cb/work, on a server that registered only that path: the authorization check passes', async () => {
    const doorkeeper = await startDoorkeeper({ redirectUris: ['http://127.0.0.1/cb/work'] });
    const configDir = makeConfigDir();
    const env = doorkeeper.env(configDir, { BROWSER: HEADLESS_BROWSER }) as Record<string, string>;
    const login = await runCli(['login', '--callback-path', '/cb/work'], { env, timeoutMs: 60_000 });
    expect(login.code, login.stderr).toBe(0);
    const doctor = await runCli(['doctor', '--json'], { env, timeoutMs: 60_000 });
    const checks = (JSON.parse(doctor.stdout) as Json).checks as Json[];
    const authorization = checks.find((check) => check.name === 'authorization');
    expect(authorization, doctor.stdout).toMatchObject({ status: 'ok' });
    expect(authorization?.detail).toContain('/cb/work');
  }, 90_000);

  it("two runners sharing a client under revoke_previous_client_credentials_token: runner A's doctor names the cause; A's api still answers (one renewal after the 401)", async () => {
    const doorkeeper = await startDoorkeeper({ revokePreviousClientCredentialsToken: true });
    const runner = () => {
      const configDir = makeConfigDir();
      const secret = join(makeScratchDir('runner-secret-'), 'secret');
      writeFileSync(secret, doorkeeper.clientSecret, { mode: 0o600 });
      const env = doorkeeper.env(configDir) as Record<string, string>;
      delete env.MMAUTH_CLIENT_SECRET;
      return { env, secret };
    };
    const a = runner();
    const b = runner();
    for (const { env, secret } of [a, b]) {
      const signIn = await runCli(['client-credentials', '--client-secret-file', secret], { env, timeoutMs: 60_000 });
      expect(signIn.code, signIn.stderr).toBe(0);
    }
    // B's sign-in revoked A's token at the server.
    const tokens = await doorkeeper.tokens();
    expect(tokens.filter((token) => !token.revoked)).toHaveLength(1);
    const doctor = await runCli(['doctor', '--json'], { env: a.env, timeoutMs: 60_000 });
    const token = ((JSON.parse(doctor.stdout) as Json).checks as Json[]).find((check) => check.name === 'token');
    expect(token, doctor.stdout).toMatchObject({ status: 'fail' });
    expect(token?.detail).toContain('revoke_previous_client_credentials_token');
    expect(token?.fix).toContain('mmauth agent');
    const api = await runCli(['api', '/api/me'], { env: a.env, timeoutMs: 60_000 });
    expect(api.code, api.stderr).toBe(0);
    expect(api.stdout).toContain('"scope"');
  }, 90_000);
});
