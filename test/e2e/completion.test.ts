import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const COMMANDS = [
  'login',
  'client-credentials',
  'info',
  'revoke',
  'token',
  'refresh',
  'api',
  'header',
  'status',
  'logout',
  'doctor',
  'emulator',
  'completion',
];

/** Completes `line` (as typed after the prompt) in a real bash with the generated script loaded. */
function completeInBash(script: string, line: string): string[] {
  const words = line.split(' ');
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mmauth; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8', timeout: 10_000 });
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
      '--help',
    ]);
    expect(completeInBash(script, 'mmauth token -')).toEqual([
      '--profile',
      '--json',
      '--verbose',
      '--min-ttl',
      '--no-renew',
      '--timeout',
      '-h',
      '--help',
    ]);
    expect(completeInBash(script, 'mmauth emulator --flavor ')).toEqual(['spec', 'doorkeeper5']);
    expect(completeInBash(script, 'mmauth login --profile ')).toEqual([]);
    expect(completeInBash(script, 'mmauth completion ')).toEqual(['bash', 'zsh', 'fish']);
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
      `complete -c mmauth -n '__fish_seen_subcommand_from emulator' -l flavor -x -a 'spec doorkeeper5'`,
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
