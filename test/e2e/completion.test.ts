import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { makeScratchDir, runCli } from '../support/cli.js';

const COMMANDS = [
  'login',
  'client-credentials',
  'info',
  'revoke',
  'token',
  'refresh',
  'api',
  'exec',
  'proxy',
  'agent',
  'header',
  'status',
  'logout',
  'profile',
  'doctor',
  'emulator',
  'completion',
];

/** Completes `line` (as typed after the prompt) in a real bash with the generated script loaded; `env` for the `mmauth` it calls. */
function completeInBash(script: string, line: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const words = line.split(' ');
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mmauth; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], {
    encoding: 'utf8',
    timeout: 10_000,
    env,
  });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((w) => w !== '');
}

describe('mmauth completion', () => {
  it('bash: a script that bash accepts and that completes commands, options and values', async () => {
    const result = await runCli(['completion', 'bash']);
    expect(result.code).toBe(0);
    const script = result.stdout;
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
    expect(completeInBash(script, 'mmauth ')).toEqual([...COMMANDS, '--help', '--version']);
    expect(completeInBash(script, 'mmauth lo')).toEqual(['login', 'logout']);
    expect(completeInBash(script, 'mmauth login --im')).toEqual(['--implicit']);
    expect(completeInBash(script, 'mmauth token --')).toEqual([
      '--profile',
      '--json',
      '--verbose',
      '--min-ttl',
      '--no-renew',
      '--timeout',
      '--deadline',
      '--verify',
      '--help',
    ]);
    expect(completeInBash(script, 'mmauth token -')).toEqual([
      '--profile',
      '--json',
      '--verbose',
      '--min-ttl',
      '--no-renew',
      '--timeout',
      '--deadline',
      '--verify',
      '-h',
      '--help',
    ]);
    expect(completeInBash(script, 'mmauth emulator --flavor ')).toEqual(['spec', 'doorkeeper5', 'doorkeeper6']);
    // No profiles (an empty config directory): nothing to complete.
    const empty = { ...process.env, MMAUTH_CONFIG_DIR: '/nonexistent/mmauth-config' };
    expect(completeInBash(script, 'mmauth login --profile ', empty)).toEqual([]);
    expect(completeInBash(script, 'mmauth completion ')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('bash: --profile and profile use|set|rename|remove complete the profile names from the config file', async () => {
    const { writeFileSync, chmodSync, mkdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { BIN } = await import('../support/cli.js');
    const dir = makeScratchDir('mmauth-completion-');
    const configDir = join(dir, 'config');
    mkdirSync(configDir, { mode: 0o700 });
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles: { work: {}, ci: {} } }), { mode: 0o600 });
    // `mmauth` on PATH, as a user has it.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'mmauth'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    );
    chmodSync(join(bin, 'mmauth'), 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, MMAUTH_CONFIG_DIR: configDir };
    const script = (await runCli(['completion', 'bash'])).stdout;
    expect(completeInBash(script, 'mmauth token --profile ', env)).toEqual(['ci', 'work']);
    expect(completeInBash(script, 'mmauth profile use w', env)).toEqual(['work']);
    expect(completeInBash(script, 'mmauth profile ', env)).toEqual(
      expect.arrayContaining(['list', 'use', 'create', 'set', 'rename', 'remove']),
    );
  });

  it('zsh and fish: every command and its options are in the script', async () => {
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    const fish = (await runCli(['completion', 'fish'])).stdout;
    expect(zsh.startsWith('#compdef mmauth\n')).toBe(true);
    for (const command of COMMANDS) {
      expect(zsh).toMatch(new RegExp(`^ {4}'${command}:`, 'm'));
      expect(zsh).toMatch(new RegExp(`^ {4}${command}\\)$`, 'm'));
      expect(fish).toContain(`complete -c mmauth -n __fish_use_subcommand -a ${command} -d `);
    }
    expect(zsh).toContain(
      `--client-secret-file'[read the client secret from this file (or set MMAUTH_CLIENT_SECRET)]:file:_files'`,
    );
    expect(fish).toContain(`complete -c mmauth -n '__fish_seen_subcommand_from login' -l client-secret-file -r -F`);
    expect(fish).toContain(
      `complete -c mmauth -n '__fish_seen_subcommand_from emulator' -l flavor -x -a 'spec doorkeeper5 doorkeeper6'`,
    );
  });

  it('refuses an unknown shell with exit 2', async () => {
    const result = await runCli(['completion', 'powershell']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Allowed choices are bash, zsh, fish');
  });
});

describe('help', () => {
  it.each(['', ...COMMANDS])('mmauth %s --help shows examples', async (command) => {
    const result = await runCli([...(command === '' ? [] : [command]), '--help']);
    expect(result.code).toBe(0);
    const examples = /\nExamples:\n((?: {2}\$ .*\n)+)/.exec(result.stdout)?.[1] ?? '';
    expect(examples).toContain(`mmauth ${command}`.trim());
  });
});
