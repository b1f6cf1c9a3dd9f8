import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, makeConfigDir, runCli, summaryLines } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';

/** Runs `node bin/mmauth.cjs …args` under `sh -c 'umask U; exec …'`, feeding `input` on stdin. */
function runWithUmask(
  umask: string,
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', `umask ${umask}; exec "$@"`, 'sh', process.execPath, BIN, ...args], {
      env: cleanEnv(env),
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.stdin.end(input);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('the store under parallel writers, odd umasks and damaged files', () => {
  it('20 processes writing 20 different profiles at once lose none (the read-modify-write is locked)', async () => {
    const configDir = makeConfigDir();
    const writers = Array.from({ length: 20 }, (_, i) => `writer-${String(i).padStart(2, '0')}`);
    const codes = await Promise.all(
      writers.map((profile) =>
        runWithUmask(
          '022',
          ['login', '--with-token', '--no-verify', '--profile', profile, '--base-url', 'http://127.0.0.1:9'],
          { MMAUTH_CONFIG_DIR: configDir },
          `token-of-${profile}-0123456789\n`,
        ),
      ),
    );
    expect(codes).toEqual(writers.map(() => 0));
    const config = readConfig(configDir) as { profiles: Record<string, { token: { access_token: string } }> };
    expect(Object.keys(config.profiles).sort()).toEqual(writers);
    for (const profile of writers) {
      expect(config.profiles[profile]?.token.access_token).toBe(`token-of-${profile}-0123456789`);
    }
    expect(() => statSync(join(configDir, 'config.json.lock'))).toThrow();
  }, 60_000);

  it.each(['000', '022', '077'])('umask %s: the file is 0600 and the directory 0700', async (umask) => {
    const configDir = makeConfigDir();
    const code = await runWithUmask(
      umask,
      ['login', '--with-token', '--no-verify', '--base-url', 'http://127.0.0.1:9'],
      { MMAUTH_CONFIG_DIR: configDir },
      'a-token-0123456789\n',
    );
    expect(code).toBe(0);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['not JSON', '{"profiles": {', /is not valid JSON/],
    ['profiles not an object', '{"profiles": []}', /"profiles" must be an object/],
    [
      'a token of the wrong shape',
      '{"profiles": {"default": {"token": {"grant": "personal", "access_token": 7}}}}',
      /profiles\.default\.token\.access_token must be a string/,
    ],
  ])(
    'a config file with %s: exit 1 naming the file, the file untouched, for readers and writers alike',
    async (_name, text, message) => {
      const emulator = await startTestEmulator();
      const configDir = makeConfigDir();
      mkdirSync(configDir, { recursive: true, mode: 0o700 });
      const file = join(configDir, 'config.json');
      writeFileSync(file, text, { mode: 0o600 });
      for (const args of [['status'], ['token'], ['client-credentials'], ['login', '--with-token', '--no-verify']]) {
        const result = await runCli(args, { env: emulator.env(configDir), input: 'tok-0123456789\n' });
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr).toContain(file);
        expect(result.stderr).toMatch(message);
        expect(result.stderr).toContain('never resets it');
        expect(result.stderr).not.toMatch(/^\s+at /m);
        expect(result.stdout).toBe('');
        expect(readFileSync(file, 'utf8')).toBe(text);
      }
    },
  );

  it('an unreadable config file: exit 1 naming the file and the reason', async () => {
    if (process.getuid?.() === 0) {
      // root reads any file whatever its mode: make the path a directory instead, also unreadable as a file.
      const configDir = makeConfigDir();
      mkdirSync(join(configDir, 'config.json'), { recursive: true });
      const result = await runCli(['status'], { env: { MMAUTH_CONFIG_DIR: configDir } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/cannot read config file .*config\.json \(EISDIR\)/);
      return;
    }
    const configDir = makeConfigDir();
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(configDir, 'config.json'), '{}', { mode: 0o600 });
    chmodSync(join(configDir, 'config.json'), 0o000);
    const result = await runCli(['status'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot read config file .*config\.json \(EACCES\)/);
  });

  it('a token with no expires_in is shown as "no expiry" everywhere', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 0 });
    const configDir = makeConfigDir();
    const got = await runCli(['client-credentials', '--json'], { env: emulator.env(configDir) });
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ expires_in: null, expires_at: null });
    expect(summaryLines(got.stderr)).toEqual([]);
    const status = await runCli(['status'], { env: emulator.env(configDir) });
    expect(status.stderr).toMatch(/token:\s+valid \(no expiry; not checked\)/);
    const info = await runCli(['info'], { env: emulator.env(configDir) });
    expect(info.stderr).toMatch(/expires:\s+no expiry/);
    expect((await runCli(['token', '--min-ttl', '31536000'], { env: emulator.env(configDir) })).code).toBe(0);
  });
});
