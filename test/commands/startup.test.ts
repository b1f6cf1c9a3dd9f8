import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, makeConfigDir } from '../support/cli.js';

const RECORDER = resolve(import.meta.dirname, '../support/record-imports.mjs');

/** The npm packages a run of mmauth loads, by name. */
function packagesLoaded(args: string[], env: Record<string, string> = {}): Promise<Set<string>> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, ['--import', RECORDER, BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      const names = [...stderr.matchAll(/\[import\] \S*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1] ?? '');
      done(new Set(names));
    });
  });
}

describe('start-up imports only commander', () => {
  it.each([
    [['--help']],
    [['--version']],
    [['login', '--help']],
    [['client-credentials', '--help']],
  ])('mmauth %j loads commander and nothing else', async (args) => {
    expect([...(await packagesLoaded(args))].sort()).toEqual(['@commander-js/extra-typings', 'commander']);
  });

  it('a non-interactive `info` loads neither chalk nor inquirer nor open', async () => {
    const loaded = await packagesLoaded(['info'], { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_BASE_URL: 'http://127.0.0.1:9', MMAUTH_TOKEN: 'x' });
    expect(loaded.has('commander')).toBe(true);
    expect(loaded.has('undici')).toBe(true);
    for (const name of ['chalk', '@inquirer/password', 'open', 'oauth4webapi']) expect(loaded.has(name)).toBe(false);
  });
});
