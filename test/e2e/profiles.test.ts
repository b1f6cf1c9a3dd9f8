/**
 * Profiles as first-class: create, login with no other flag, use (the config file's current
 * profile, or a directory bound with `.mmauth-profile`), the selection order, rename (a keyring
 * profile stays usable), remove (the grant ends, nothing is left), `logout --all`, and
 * `unknown_profile` from every command.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;

/** A working directory of its own (where `.mmauth-profile` files go). */
function makeWorkDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-work-'));
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return dir;
}

/** A config with two profiles on the emulator, `work` (code flow) and `ci` (client credentials). */
async function twoProfiles() {
  const emulator = await startTestEmulator();
  const configDir = makeConfigDir();
  const env = {
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_CREDENTIAL_STORE: 'file',
    BROWSER: HEADLESS_BROWSER,
    MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
  };
  const create = (name: string) =>
    runCli(['profile', 'create', name, '--base-url', emulator.baseUrl, '--client-id', emulator.client.clientId], {
      env,
    });
  expect((await create('work')).code).toBe(0);
  expect((await create('ci')).code).toBe(0);
  expect((await runCli(['login', '--profile', 'work'], { env })).code).toBe(0);
  expect((await runCli(['client-credentials', '--profile', 'ci'], { env })).code).toBe(0);
  return { emulator, configDir, env };
}

const accessTokenOf = (configDir: string, profile: string): string =>
  (readConfig(configDir) as Json).profiles[profile]?.token?.access_token;

describe('profiles', () => {
  it('profile create, then login --profile NAME with no other flag; profile use makes plain `mmauth token` use it; MMAUTH_PROFILE and --profile still win', async () => {
    const { configDir, env } = await twoProfiles();
    const use = await runCli(['profile', 'use', 'work'], { env });
    expect(use.code, use.stderr).toBe(0);
    expect((await runCli(['token'], { env })).stdout.trim()).toBe(accessTokenOf(configDir, 'work'));
    expect((await runCli(['token'], { env: { ...env, MMAUTH_PROFILE: 'ci' } })).stdout.trim()).toBe(
      accessTokenOf(configDir, 'ci'),
    );
    expect((await runCli(['token', '--profile', 'ci'], { env })).stdout.trim()).toBe(accessTokenOf(configDir, 'ci'));
    const list = JSON.parse((await runCli(['profile', 'list', '--json'], { env })).stdout) as Json;
    expect(list).toMatchObject({ current: 'work', selected_by: 'config', directory_file: null });
    expect(Object.keys(list.profiles[0]).sort()).toEqual(
      ['base_url', 'client_id', 'credentials', 'current', 'expires_at', 'grant', 'name', 'state'].sort(),
    );
    expect(list.profiles.map((p: Json) => [p.name, p.current, p.grant, p.credentials])).toEqual([
      ['ci', false, 'client_credentials', 'file'],
      ['work', true, 'authorization_code', 'file'],
    ]);
    // `default` is an ordinary name: profile use with an unknown one is unknown_profile.
    expect((await runCli(['profile', 'use', 'nosuch'], { env })).code).toBe(4);
  });

  it('a .mmauth-profile selects its profile in that directory and below, and loses to MMAUTH_PROFILE; one naming no profile is unknown_profile naming the file', async () => {
    const { configDir, env } = await twoProfiles();
    const dir = makeWorkDir();
    const bound = await runCli(['profile', 'use', 'ci', '--directory', dir], { env });
    expect(bound.code, bound.stderr).toBe(0);
    expect(readFileSync(join(dir, '.mmauth-profile'), 'utf8')).toBe('ci\n');
    const below = join(dir, 'a', 'b');
    mkdirSync(below, { recursive: true });
    const inside = await runCli(['token'], { env, cwd: below });
    expect(inside.stdout.trim()).toBe(accessTokenOf(configDir, 'ci'));
    const status = JSON.parse((await runCli(['status', '--json'], { env, cwd: below })).stdout) as Json;
    expect(status).toMatchObject({
      selected: 'ci',
      selected_by: 'directory',
      directory_file: join(dir, '.mmauth-profile'),
    });
    expect((await runCli(['token'], { env: { ...env, MMAUTH_PROFILE: 'work' }, cwd: below })).stdout.trim()).toBe(
      accessTokenOf(configDir, 'work'),
    );
    // A changed file is no longer the approved one: it fails closed, naming the file and the approval
    // command; stdout stays empty (a helper that ignores stderr never gets another profile's token).
    writeFileSync(join(dir, '.mmauth-profile'), 'gone\n');
    const changed = await runCli(['token', '--json'], { env, cwd: below });
    expect(changed.code).toBe(4);
    expect((JSON.parse(changed.stdout) as Json).error.code).toBe('directory_file_not_approved');
    const plain = await runCli(['token'], { env, cwd: below });
    expect(plain.code).toBe(4);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toContain(
      `${join(dir, '.mmauth-profile')} names profile "gone", but you have not approved it`,
    );
    expect(plain.stderr).toContain(`mmauth profile trust ${dir}`);
    expect((await runCli(['profile', 'trust', dir], { env })).code).toBe(4);
    // Writable by others, or naming nothing: it fails closed too, naming why.
    writeFileSync(join(dir, '.mmauth-profile'), 'ci\n');
    chmodSync(join(dir, '.mmauth-profile'), 0o666);
    const loose = await runCli(['token', '--json'], { env, cwd: below });
    expect(loose.code).toBe(4);
    expect((JSON.parse(loose.stdout) as Json).error).toMatchObject({ code: 'directory_file_invalid' });
    expect(loose.stderr + loose.stdout).toContain('others cannot write');
    chmodSync(join(dir, '.mmauth-profile'), 0o644);
    writeFileSync(join(dir, '.mmauth-profile'), '\n');
    const empty = await runCli(['token'], { env, cwd: below });
    expect(empty.code).toBe(4);
    expect(empty.stderr).toContain('it names no profile');
    // --profile and MMAUTH_PROFILE still win without reading it.
    expect((await runCli(['token', '--profile', 'work'], { env, cwd: below })).code).toBe(0);
  });

  it('profile rename keeps a token usable under the new name; the current pointer follows', async () => {
    const { configDir, env } = await twoProfiles();
    expect((await runCli(['profile', 'use', 'work'], { env })).code).toBe(0);
    const before = accessTokenOf(configDir, 'work');
    const renamed = await runCli(['profile', 'rename', 'work', 'job'], { env });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stderr).toContain('.mmauth-profile files');
    expect((await runCli(['token', '--profile', 'job'], { env })).stdout.trim()).toBe(before);
    expect((await runCli(['token'], { env })).stdout.trim()).toBe(before);
    expect((await runCli(['token', '--profile', 'work'], { env })).code).toBe(4);
    expect((await runCli(['profile', 'rename', 'job', 'ci'], { env })).code).toBe(2);
  });

  it('profile remove ends the grant on the server and leaves nothing of the profile in the file', async () => {
    const { emulator, configDir, env } = await twoProfiles();
    expect((await runCli(['profile', 'use', 'work'], { env })).code).toBe(0);
    const removed = await runCli(['profile', 'remove', 'work', '--json'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({
      removed: true,
      logged_out: true,
      revoked: true,
      confirmed: true,
    });
    const config = readConfig(configDir) as Json;
    expect(Object.keys(config.profiles)).toEqual(['ci']);
    expect(config.current_profile).toBeUndefined();
    expect(emulator.state.refreshTokens.size).toBe(0);
  });

  it('profile remove with its server down keeps the profile and names --local-only; --local-only then removes it', async () => {
    const { emulator, configDir, env } = await twoProfiles();
    await emulator.close();
    const failed = await runCli(['profile', 'remove', 'ci', '--timeout', '2'], { env });
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain('--local-only');
    expect(Object.keys((readConfig(configDir) as Json).profiles)).toContain('ci');
    expect((await runCli(['profile', 'remove', 'ci', '--local-only'], { env })).code).toBe(0);
    expect(Object.keys((readConfig(configDir) as Json).profiles)).not.toContain('ci');
  });

  it('logout --all with one of two servers down: the other profile is logged out, exit non-zero, one result each', async () => {
    const { configDir, env } = await twoProfiles();
    const down = await startTestEmulator();
    const downEnv = { ...env, MMAUTH_CLIENT_SECRET: down.client.clientSecret };
    expect(
      (
        await runCli(
          ['client-credentials', '--profile', 'far', '--base-url', down.baseUrl, '--client-id', down.client.clientId],
          { env: downEnv },
        )
      ).code,
    ).toBe(0);
    await down.close();
    const result = await runCli(['logout', '--all', '--json', '--timeout', '2'], { env });
    expect(result.code).toBe(3);
    const results = JSON.parse(result.stdout) as Json[];
    expect(results.map((r) => [r.profile, r.logged_out])).toEqual([
      ['ci', true],
      ['far', false],
      ['work', true],
    ]);
    const profiles = (readConfig(configDir) as Json).profiles;
    expect(profiles.work.token).toBeUndefined();
    expect(profiles.far.token).toBeDefined();
  });

  it.each([['api', '/api/me'], ['doctor'], ['token'], ['status'], ['info'], ['logout']])(
    '%s --profile typo: exit 4 unknown_profile listing the known ones',
    async (...args) => {
      const { env } = await twoProfiles();
      const result = await runCli([...args, '--profile', 'typo'], { env });
      expect(result.code, result.stderr).toBe(4);
      expect(result.stderr).toContain('no profile "typo"');
      expect(result.stderr).toContain('"work"');
    },
  );

  it('status --profile NAME shows that profile only', async () => {
    const { env } = await twoProfiles();
    const status = JSON.parse((await runCli(['status', '--json', '--profile', 'ci'], { env })).stdout) as Json;
    expect(status.profiles.map((p: Json) => p.name)).toEqual(['ci']);
  });

  it('a profile use during 20 parallel renewals of another profile: both survive', async () => {
    const { configDir, env } = await twoProfiles();
    const config = readConfig(configDir) as Json;
    config.profiles.ci.token.obtained_at = new Date(Date.now() - 3 * 3_600_000).toISOString();
    config.profiles.ci.token.expires_at = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const renewals = Array.from({ length: 20 }, () =>
      startCli(['token', '--profile', 'ci'], { env, timeoutMs: 30_000 }),
    );
    const use = await runCli(['profile', 'use', 'work'], { env });
    const results = await Promise.all(renewals.map((r) => r.done));
    expect(use.code).toBe(0);
    expect(results.every((r) => r.code === 0)).toBe(true);
    const after = readConfig(configDir) as Json;
    expect(after.current_profile).toBe('work');
    expect(new Set(results.map((r) => r.stdout.trim())).size).toBe(1);
    expect(after.profiles.ci.token.access_token).toBe(results[0]?.stdout.trim());
  }, 60_000);

  it('profile set: another origin on a profile holding credentials exits 2 unless --replace, which ends the grant first and drops the credentials', async () => {
    const { emulator, configDir, env } = await twoProfiles();
    const refused = await runCli(['profile', 'set', 'work', '--base-url', 'http://127.0.0.1:1'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--replace');
    expect((readConfig(configDir) as Json).profiles.work.base_url).toBe(emulator.baseUrl);
    const scope = await runCli(['profile', 'set', 'work', '--scope', 'service'], { env });
    expect(scope.code, scope.stderr).toBe(0);
    const replaced = await runCli(['profile', 'set', 'work', '--base-url', 'http://127.0.0.1:1', '--replace'], { env });
    expect(replaced.code, replaced.stderr).toBe(0);
    const work = (readConfig(configDir) as Json).profiles.work;
    expect(work).toMatchObject({ base_url: 'http://127.0.0.1:1', scope: 'service' });
    expect(work.token).toBeUndefined();
    expect(emulator.state.refreshTokens.size).toBe(0);
  });
});
