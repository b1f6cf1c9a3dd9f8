import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';

describe('the token store', () => {
  it('a stored token survives every kind of failed later command', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['login'], { env: { ...env, BROWSER: HEADLESS_BROWSER } })).code).toBe(0);
    const before = readConfigText(configDir);

    const failures: [string[], Record<string, string | undefined>, number][] = [
      [['client-credentials'], {}, 2], // a client token would replace the user's token
      [['client-credentials', '--replace'], { MMAUTH_CLIENT_SECRET: 'wrong' }, 4],
      [['login'], { MMAUTH_CLIENT_SECRET: 'wrong', BROWSER: HEADLESS_BROWSER }, 4],
      [['login', '--no-browser', '--wait', '1'], {}, 3],
      [['client-credentials', '--replace', '--scope', 'nope'], {}, 2],
      [['revoke'], { MMAUTH_CLIENT_SECRET: 'wrong' }, 4],
      [['info', '--base-url', 'http://127.0.0.1:9'], {}, 2], // the stored token stays with its server
      [['info', '--base-url', 'http://127.0.0.1:9'], { MMAUTH_TOKEN: 'x'.repeat(30) }, 3],
    ];
    for (const [args, extra, code] of failures) {
      const result = await runCli(args, { env: { ...env, ...extra } });
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(readConfigText(configDir)).toBe(before);
    }
    expect((await runCli(['info'], { env })).code).toBe(0);
  });

  it('keeps other profiles when one is written', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    expect((await runCli(['client-credentials', '--profile', 'ci'], { env })).code).toBe(0);
    expect(
      (await runCli(['client-credentials', '--scope', 'userinfo.email'], { env: { ...env, MMAUTH_PROFILE: 'other' } }))
        .code,
    ).toBe(0);
    const config = readConfig(configDir) as { profiles: Record<string, { scope: string }> };
    expect(Object.keys(config.profiles).sort()).toEqual(['ci', 'other']);
    expect(config.profiles.other?.scope).toBe('userinfo.email');
  });

  it('tightens an existing config directory to 0700 and the file to 0600', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    mkdirSync(configDir, { recursive: true, mode: 0o755 });
    chmodSync(configDir, 0o755);
    writeFileSync(join(configDir, 'config.json'), '{}', { mode: 0o644 });
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('refuses a corrupt config file with a clear error naming it, and leaves it untouched', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(configDir, 'config.json'), '{"profiles": {"default": ', { mode: 0o600 });
    const result = await runCli(['client-credentials'], { env: emulator.env(configDir) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`config file ${join(configDir, 'config.json')} is not valid JSON`);
    expect(readConfigText(configDir)).toBe('{"profiles": {"default": ');
  });
});
