/**
 * With --json, stdout is exactly one JSON document, always: a failing command prints
 * {"error": {code, message, hint, exit_code, oauth_error?, status?}} besides the line on stderr,
 * unless it printed its own document first (status --json with an expired token).
 */
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';

describe('errors under --json', () => {
  it.each<[string, string[], Record<string, string | undefined>, string, number]>([
    ['token, not logged in', ['token', '--json', '--profile', 'nosuch'], {}, 'unknown_profile', 4],
    ['info, no base URL', ['info', '--json'], { MMAUTH_TOKEN: 'x'.repeat(20) }, 'no_base_url', 2],
    [
      'info, a server that is down',
      ['info', '--json', '--base-url', 'http://127.0.0.1:9'],
      { MMAUTH_TOKEN: 'x'.repeat(20) },
      'connection_failed',
      3,
    ],
    [
      'client-credentials, a wrong secret',
      ['client-credentials', '--json'],
      { server: '1', MMAUTH_CLIENT_SECRET: 'wrong' },
      'token_endpoint_error',
      4,
    ],
    [
      'client-credentials, exclusive options',
      ['client-credentials', '--json', '--client-secret-stdin', '--client-secret-file', 'f'],
      {},
      'conflicting_options',
      2,
    ],
    ['login, a bad --wait', ['login', '--json', '--wait', 'soon'], {}, 'usage', 2],
    [
      'revoke, another server',
      ['revoke', '--json', '--base-url', 'http://127.0.0.1:9'],
      { stored: '1' },
      'base_url_mismatch',
      2,
    ],
    ['logout, no such profile', ['logout', '--json', '--profile', 'nosuch'], {}, 'unknown_profile', 4],
    ['refresh, nothing to renew with', ['refresh', '--json'], { expired: '1' }, 'not_renewable', 4],
    ['an unknown option', ['token', '--json', '--bogus'], {}, 'usage', 2],
  ])('%s: one document, code %s', async (_what, args, setup, code, exitCode) => {
    const configDir = makeConfigDir();
    const env: Record<string, string | undefined> = { MMAUTH_CONFIG_DIR: configDir };
    if (setup.server !== undefined) {
      const emulator = await startTestEmulator();
      Object.assign(env, emulator.env(configDir));
    }
    if (setup.expired !== undefined) {
      writeProfiles(configDir, {
        default: { base_url: 'http://127.0.0.1:9', token: storedToken('e'.repeat(30), inS(-5), 'implicit') },
      });
    }
    if (setup.stored !== undefined) {
      writeProfiles(configDir, {
        default: { base_url: 'http://127.0.0.1:8', client_id: 'a', token: storedToken('s'.repeat(30), inS(600)) },
      });
    }
    for (const [key, value] of Object.entries(setup)) if (/^[A-Z_]+$/.test(key)) env[key] = value;
    const result = await runCli(args, { env });
    expect(result.code, result.stderr).toBe(exitCode);
    const document = JSON.parse(result.stdout);
    expect(Object.keys(document)).toEqual(['schema_version', 'error']);
    expect(document.error).toMatchObject({ code, exit_code: exitCode, message: expect.any(String) });
    expect(result.stderr).toContain('error:');
    if (code === 'token_endpoint_error')
      expect(document.error).toMatchObject({ oauth_error: 'invalid_client', status: 401 });
  });

  it.each([
    ['an expired token', ['--no-renew'], 'token_expired', 4],
    ['no such profile', ['--profile', 'nosuch'], 'unknown_profile', 4],
  ])(
    'header --json, %s: stdout stays empty (it is read as a header map); the error document is on stderr',
    async (_what, args, code, exitCode) => {
      const configDir = makeConfigDir();
      writeProfiles(configDir, {
        default: { base_url: 'http://127.0.0.1:9', token: storedToken('e'.repeat(30), inS(-5), 'implicit') },
      });
      const result = await runCli(['header', '--json', ...args], { env: { MMAUTH_CONFIG_DIR: configDir } });
      expect(result.code).toBe(exitCode);
      expect(result.stdout).toBe('');
      const document = JSON.parse(result.stderr) as Record<string, any>;
      expect(Object.keys(document)).toEqual(['schema_version', 'error']);
      expect(document.error).toMatchObject({ code, exit_code: exitCode });
    },
  );

  it('status --json with an expired token prints its own document, and no second one', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { default: { token: storedToken('e'.repeat(30), inS(-5), 'implicit') } });
    const result = await runCli(['status', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toHaveProperty('profiles');
  });
});
