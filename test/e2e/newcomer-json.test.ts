/**
 * What a new user tripped over (issue 25), continued: --json runs whose stderr carries warnings
 * and errors only (20, decisions 32).
 */
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

describe('--json: stderr carries warnings and errors only (20)', () => {
  it('a whole session under --json leaves stderr empty, as an agent capturing 2>&1 needs; errors still go there', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 600 });
    const env = emulator.env(makeConfigDir(), { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
    const runs = [
      ['login'],
      ['login'],
      ['status'],
      ['status', '--check'],
      ['info'],
      ['token'],
      ['refresh'],
      ['header'],
      ['client-credentials', '--profile', 'ci'],
      ['client-credentials', '--no-save'],
      ['profile', 'list'],
      ['revoke', '--profile', 'ci'],
      ['logout'],
    ];
    for (const args of runs) {
      const result = await runCli([...args, '--json'], { env });
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(() => JSON.parse(result.stdout) as unknown).not.toThrow();
    }
    const failed = await runCli(['info', '--json'], { env });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toMatch(/^error: /);
    expect(JSON.parse(failed.stdout)).toMatchObject({ error: { code: expect.any(String) } });
  });

  it('without --json the same commands still print their summary', async () => {
    const emulator = await startTestEmulator();
    const env = emulator.env(makeConfigDir(), { MMAUTH_CREDENTIAL_STORE: 'file' });
    const result = await runCli(['client-credentials'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Got a client credentials token');
  });

  it.each<[string, Record<string, string>]>([
    ['--no-browser', {}],
    ['a BROWSER that fails', { BROWSER: 'false' }],
  ])(
    'login --json with %s still shows the URL the user must open (an instruction, not a summary)',
    async (_, extra) => {
      const emulator = await startTestEmulator();
      const env = emulator.env(makeConfigDir(), { MMAUTH_CREDENTIAL_STORE: 'file', ...extra });
      const args = extra.BROWSER === undefined ? ['login', '--json', '--no-browser'] : ['login', '--json'];
      const login = startCli(args, { env, timeoutMs: 15_000 });
      await login.waitForStderr(
        /Open this URL in a browser to sign in[^\n]*\n\n {2}http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?/,
      );
      if (extra.BROWSER !== undefined) await login.waitForStderr(/! the BROWSER command failed/);
      login.child.kill('SIGINT');
      expect((await login.done).code).toBe(130);
      expect(login.stdout()).toContain('"error"');
    },
  );
});
