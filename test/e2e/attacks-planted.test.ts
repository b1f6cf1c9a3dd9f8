/**
 * Planted and hostile files (issue 31: N12, N16, N27, N28, N17, W15): a cloned repository, a huge or
 * endless file, a profile name made to run in a shell. Each case is the attack tried again.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, makeScratchDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { writeProfiles } from '../support/profiles.js';

/** A scratch directory of this test's. */
const workDir = () => makeScratchDir('mmauth-planted-');

async function twoServers() {
  const dev = await startTestEmulator();
  const prod = await startTestEmulator();
  const configDir = makeConfigDir();
  const file = { MMAUTH_CREDENTIAL_STORE: 'file' };
  expect((await runCli(['client-credentials', '--profile', 'dev'], { env: dev.env(configDir, file) })).code).toBe(0);
  expect((await runCli(['client-credentials', '--profile', 'prod'], { env: prod.env(configDir, file) })).code).toBe(0);
  expect((await runCli(['profile', 'use', 'dev'], { env: { MMAUTH_CONFIG_DIR: configDir } })).code).toBe(0);
  return { dev, prod, configDir, env: { MMAUTH_CONFIG_DIR: configDir } };
}

describe('N12: a repository cannot choose the profile', () => {
  it("a cloned repository's .mmauth-profile naming prod fails closed until `profile trust` (no profile touched); then the approval and every run but a helper form's say so; a change needs approving again", async () => {
    const { dev, prod, configDir, env } = await twoServers();
    const repo = workDir();
    writeFileSync(join(repo, '.mmauth-profile'), 'prod\n');
    const before = { prod: prod.requests.length, dev: dev.requests.length };
    const logout = await runCli(['logout'], { env, cwd: repo });
    expect(logout.code).toBe(4);
    expect(logout.stderr).toContain(
      `${join(repo, '.mmauth-profile')} names profile "prod", but you have not approved it`,
    );
    // Neither grant was touched: not prod's, and not dev's in its place.
    expect(prod.requests.length).toBe(before.prod);
    expect(dev.requests.length).toBe(before.dev);
    // profile list still lists, and says no profile is current here.
    const list = await runCli(['profile', 'list'], { env, cwd: repo });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toContain('Current: none here:');
    const trust = await runCli(['profile', 'trust', repo], { env });
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout + trust.stderr).toContain(`use profile "prod"`);
    const notice = `Using profile "prod" (from ${join(repo, '.mmauth-profile')}).`;
    const token = await runCli(['token'], { env, cwd: repo });
    expect(token.code, token.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    expect(token.stdout.trim()).toBe(config.profiles.prod.token.access_token);
    // A helper form runs on every request of another tool: the approval said it; --verbose says it again.
    expect(token.stderr).toBe('');
    const header = await runCli(['header'], { env, cwd: repo });
    expect({ code: header.code, stderr: header.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await runCli(['token', '--verbose'], { env, cwd: repo })).stderr).toContain(notice);
    // Every other command says it on each run.
    const status = await runCli(['status'], { env, cwd: repo });
    expect(status.stderr + status.stdout).toContain(notice);
    writeFileSync(join(repo, '.mmauth-profile'), 'dev\n');
    const changed = await runCli(['status', '--json'], { env, cwd: repo });
    expect(changed.code).toBe(4);
    expect(JSON.parse(changed.stdout).error.code).toBe('directory_file_not_approved');
  });

  it('N16: a huge .mmauth-profile is refused unread (bounded, at once); names are shown truncated', async () => {
    const { env } = await twoServers();
    const repo = workDir();
    writeFileSync(join(repo, '.mmauth-profile'), 'x'.repeat(50 * 1024 * 1024));
    const started = Date.now();
    const status = await runCli(['status', '--json'], { env, cwd: repo });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(status.code).toBe(4);
    expect(JSON.parse(status.stdout).error.code).toBe('directory_file_invalid');
    expect(status.stderr).toContain('is larger than mmauth reads (52428800 bytes)');
    writeFileSync(join(repo, '.mmauth-profile'), `${'y'.repeat(200)}\n`);
    const long = await runCli(['status', '--json'], { env, cwd: repo });
    expect(long.stderr).toContain(`names profile "${'y'.repeat(64)}…"`);
  });
});

describe('N28: planted FIFOs never hang mmauth', () => {
  it.each(['.mmauth-profile', 'config.json', 'config.json.lock.pid'])(
    'a FIFO as %s: the command ends by its own rules, within seconds',
    async (name) => {
      const { env, configDir } = await twoServers();
      const repo = workDir();
      const where = name === '.mmauth-profile' ? join(repo, name) : join(configDir, name);
      if (name === 'config.json') rmSync(where);
      if (name === 'config.json.lock.pid') mkdirSync(join(configDir, 'config.json.lock'));
      execFileSync('mkfifo', ['-m', '600', where]);
      const started = Date.now();
      const result = await runCli(['token', '--profile', 'dev'], { env, cwd: repo, timeoutMs: 15_000 });
      expect(Date.now() - started).toBeLessThan(12_000);
      if (name === 'config.json') {
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('(a FIFO)');
      } else {
        expect(result.code, result.stderr).toBe(0);
      }
    },
    20_000,
  );
});

describe('N27: Tab never runs a command named in the config file', () => {
  it('a profile named $(touch …) is not listed by --names, and the bash completion never expands it', async () => {
    const configDir = makeConfigDir();
    const marker = join(workDir(), 'ran');
    writeProfiles(configDir, { [`$(touch ${marker})`]: { base_url: 'https://maps.example.com' }, ok: {} });
    const names = await runCli(['profile', 'list', '--names'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(names.stdout).toBe('ok\n');
    const script = (await runCli(['completion', 'bash'])).stdout;
    expect(script).not.toMatch(/compgen -W "\$\(mmauth profile list/);
    // Complete `mmauth token --profile <Tab>` in a real bash with a stand-in mmauth that prints the planted name.
    const bin = workDir();
    writeFileSync(join(bin, 'mmauth'), `#!/bin/sh\nprintf '%s\\n' '$(touch ${marker})' ok\n`, { mode: 0o755 });
    const run = spawnSync(
      'bash',
      [
        '-c',
        `${script}\nCOMP_WORDS=(mmauth token --profile ''); COMP_CWORD=3; _mmauth; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8', timeout: 10_000 },
    );
    expect(run.stdout).toContain('ok');
    expect(() => readFileSync(marker)).toThrow();
  });
});
