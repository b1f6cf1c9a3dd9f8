/**
 * The config directory and file are trusted only when they are this user's: a planted directory or
 * file, a symbolic link, or a lock that never goes stale is refused or named before any request.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, startCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { startListeningFixture } from '../support/listening-fixture.js';
import { writeProfiles } from '../support/profiles.js';

const PLANTED = {
  default: {
    base_url: 'http://127.0.0.1:9',
    token: {
      access_token: 'planted-token-0123456789',
      token_type: 'bearer',
      grant: 'personal',
      obtained_at: '2026-01-01T00:00:00Z',
    },
  },
};

describe('a config that another user could have planted (A5, A6)', () => {
  it.each([
    [
      'a directory writable by others (0777)',
      (dir: string) => chmodSync(dir, 0o777),
      /can be written by others \(mode 0777\)/,
    ],
    [
      'a file writable by others (0666)',
      (dir: string) => chmodSync(join(dir, 'config.json'), 0o666),
      /can be written by others \(mode 0666\)/,
    ],
    [
      'a file owned by another user',
      (dir: string) => chownSync(join(dir, 'config.json'), 4242, 4242),
      /belongs to uid 4242, not to this user/,
    ],
  ])('%s: exit 1 naming the path, nothing printed from it, nothing sent', async (_what, plant, message) => {
    const fixture = await startListeningFixture();
    const configDir = makeConfigDir();
    writeProfiles(configDir, { default: { ...PLANTED.default, base_url: fixture.baseUrl } });
    plant(configDir);
    for (const args of [['header'], ['info'], ['client-credentials', '--client-id', 'x']]) {
      const result = await runCli(args, {
        env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: 'victim-secret-0123456789' },
      });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain('planted-token');
    }
    expect(fixture.connections()).toBe(0);
  });

  it.each([
    ['config.json', (dir: string, elsewhere: string) => symlinkSync(elsewhere, join(dir, 'config.json'))],
    ['the lock', (dir: string, elsewhere: string) => symlinkSync(elsewhere, join(dir, 'config.json.lock'))],
  ])('%s as a symbolic link is refused, and its target is left alone', async (_what, plant) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const elsewhere = join(configDir, '..', 'victim.json');
    writeFileSync(elsewhere, '{"profiles":{}}', { mode: 0o644 });
    plant(configDir, elsewhere);
    const result = await runCli(['client-credentials'], { env: emulator.env(configDir) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is a symbolic link; mmauth does not follow links/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('{"profiles":{}}');
  });
});

describe('honest waits and modes (#9, A14)', () => {
  it('a config file readable by others: a warning on read, 0600 after the next write', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    writeProfiles(configDir, {});
    chmodSync(join(configDir, 'config.json'), 0o644);
    const status = await runCli(['status'], { env: emulator.env(configDir) });
    expect(status.stderr).toMatch(
      /config file .*config\.json is readable by others \(mode 0644\); mmauth makes it 0600 at its next write/,
    );
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    const { statSync } = await import('node:fs');
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('a lock held by a live process: after a second the waiter names it, then goes on when it is released', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    writeProfiles(configDir, {});
    mkdirSync(join(configDir, 'config.json.lock'));
    writeFileSync(join(configDir, 'config.json.lock.pid'), String(process.pid));
    const running = startCli(['client-credentials'], { env: emulator.env(configDir), timeoutMs: 20_000 });
    await running.waitForStderr(
      new RegExp(`waiting for the config lock .*config\\.json\\.lock \\(held by pid ${process.pid}\\)`),
      5_000,
    );
    const { rmSync } = await import('node:fs');
    rmSync(join(configDir, 'config.json.lock'), { recursive: true });
    expect((await running.done).code).toBe(0);
  });

  it('a planted lock with a time in the future: exit 1 naming the lock and how to remove it, not the config file', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    writeProfiles(configDir, {});
    const lock = join(configDir, 'config.json.lock');
    mkdirSync(lock);
    const future = new Date(Date.now() + 86_400_000);
    utimesSync(lock, future, future);
    const result = await runCli(['client-credentials'], { env: emulator.env(configDir), timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot lock the config: ${lock} has a time in the future`);
    expect(result.stderr).toContain(`if no mmauth is running, remove ${lock}`);
  }, 30_000);

  it('writes stay atomic with SNAP set (conf would write in place): parallel readers never see half a file', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { SNAP: '/snap/x' });
    expect((await runCli(['client-credentials', '--profile', 'a'], { env })).code).toBe(0);
    const writers = Array.from({ length: 6 }, (_, i) => runCli(['client-credentials', '--profile', `p${i}`], { env }));
    const torn: string[] = [];
    const reading = (async () => {
      for (let i = 0; i < 300; i++) {
        const text = readFileSync(join(configDir, 'config.json'), 'utf8');
        try {
          JSON.parse(text);
        } catch {
          torn.push(text.slice(0, 40));
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const results = await Promise.all(writers);
    await reading;
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(torn).toEqual([]);
  }, 30_000);
});

describe('temporary files of a killed write', () => {
  it('a later write (under the lock) removes the config.json.tmp-* a killed writer left, holding what the config held; other files stay', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { work: { base_url: 'https://maps.example.com' } });
    const left = join(configDir, 'config.json.tmp-1764230400a1b2c3');
    const unrelated = join(configDir, 'config.json.tmp-notours');
    writeFileSync(left, readFileSync(join(configDir, 'config.json')), { mode: 0o600 });
    writeFileSync(unrelated, 'x', { mode: 0o600 });
    const use = await runCli(['profile', 'use', 'work'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(use.code, use.stderr).toBe(0);
    expect(existsSync(left)).toBe(false);
    expect(existsSync(unrelated)).toBe(true);
    expect(readdirSync(configDir).filter((name) => /^config\.json\.tmp-\d{10}[0-9a-f]{6}$/.test(name))).toEqual([]);
  });
});
