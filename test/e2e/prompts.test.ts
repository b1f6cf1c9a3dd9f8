import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

describe('no TTY (or CI=true): never a prompt, exit 2 naming the flag and the variable', () => {
  it.each([
    ['base URL', ['info'], { MMAUTH_BASE_URL: undefined }, ['--base-url', 'MMAUTH_BASE_URL']],
    ['client id', ['client-credentials'], { MMAUTH_CLIENT_ID: undefined }, ['--client-id', 'MMAUTH_CLIENT_ID']],
    [
      'client secret',
      ['client-credentials'],
      { MMAUTH_CLIENT_SECRET: undefined },
      ['--client-secret-file', 'MMAUTH_CLIENT_SECRET'],
    ],
    [
      'client secret under CI=true',
      ['client-credentials'],
      { MMAUTH_CLIENT_SECRET: undefined, CI: 'true' },
      ['CI is set', 'MMAUTH_CLIENT_SECRET'],
    ],
  ])('missing %s', async (_what, args, env, mentions) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(args, {
      env: emulator.env(configDir, { MMAUTH_TOKEN: 'x'.repeat(20), ...env }),
      timeoutMs: 10_000,
    });
    expect(result.code).toBe(2);
    for (const mention of mentions) expect(result.stderr).toContain(mention);
    expect(result.stderr).not.toMatch(/^\?/m);
    expect(result.stdout).toBe('');
    expect(emulator.requests).toHaveLength(0);
  });
});
