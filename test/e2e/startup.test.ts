import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanEnv, makeConfigDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

const ROOT = resolve(import.meta.dirname, '../..');
const RECORDER = resolve(import.meta.dirname, '../support/record-loads.cjs');

/** Built-in modules that cost start-up time and that only some commands need. */
const HEAVY_BUILTINS = [
  'child_process',
  'crypto',
  'http',
  'https',
  'net',
  'tls',
  'readline',
  'stream',
  'tty',
  'fs/promises',
  'worker_threads',
];
/** Loaded by Node only when an ES module graph is linked: none may be, the ES loader costs ~4 ms. */
const ES_MODULE_JOB = 'internal/modules/esm/module_job';

interface Loaded {
  code: number | null;
  builtins: string[];
  /** CommonJS files, relative to the package root; the recorder itself left out. */
  files: string[];
}

/** Runs mmauth under the recorder (stdout and stderr are pipes, as in a script). */
function recordLoads(args: string[], env: Record<string, string> = {}, input = ''): Promise<Loaded> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, ['--require', RECORDER, BIN, ...args], {
      env: cleanEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = /\[loaded\] (.*)/.exec(stderr)?.[1];
      if (line === undefined) {
        reject(new Error(`no [loaded] line; stderr:\n${stderr}`));
        return;
      }
      const report = JSON.parse(line) as { builtins: string[]; files: string[] };
      done({
        code,
        builtins: report.builtins,
        files: report.files
          .filter((file) => file !== RECORDER)
          .map((file) => file.replace(`${ROOT}/`, ''))
          .sort(),
      });
    });
  });
}

async function configWithToken(): Promise<string> {
  const configDir = makeConfigDir();
  const stored = await runCli(['login', '--with-token', '--no-verify', '--base-url', 'http://127.0.0.1:9'], {
    env: { MMAUTH_CONFIG_DIR: configDir },
    input: 'a-stored-token-0123456789\n',
  });
  expect(stored.code).toBe(0);
  return configDir;
}

describe('start-up loads the launcher and the bundle, nothing else', () => {
  it.each([
    [['--help']],
    [['--version']],
    [['login', '--help']],
    [['client-credentials', '--help']],
    [['token']],
    [['header']],
    [['status']],
  ])(
    'mmauth %j: not even package.json (the version is in the bundle), no ES module, none of the heavy built-ins',
    async (args) => {
      const loaded = await recordLoads(args, { MMAUTH_CONFIG_DIR: await configWithToken() });
      expect(loaded.code).toBe(0);
      // The bundle itself is compiled from source text (with its code cache), so it is not in require.cache.
      expect(loaded.files).toEqual(['bin/mmauth.cjs']);
      expect(loaded.builtins.filter((name) => HEAVY_BUILTINS.includes(name) || name === ES_MODULE_JOB)).toEqual([]);
    },
  );

  it('a non-interactive `info` loads node:http, and neither undici, chalk, inquirer, open nor oauth4webapi', async () => {
    const loaded = await recordLoads(['info'], {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: 'http://127.0.0.1:9',
      MMAUTH_TOKEN: 'x',
    });
    expect(loaded.code).toBe(3); // nothing listens on port 9
    expect(loaded.builtins).toContain('http');
    expect(loaded.builtins).not.toContain('tls');
    expect(loaded.files).toEqual(['bin/mmauth.cjs']);
    expect(loaded.builtins).not.toContain(ES_MODULE_JOB);
  });

  it("`client-credentials --no-save` loads no package and not Node's internal fetch (Headers, Response)", async () => {
    const loaded = await recordLoads(['client-credentials', '--no-save', '--client-id', 'c'], {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: 'http://127.0.0.1:9',
      MMAUTH_CLIENT_SECRET: 's',
    });
    expect(loaded.code).toBe(3);
    expect(loaded.files).toEqual(['bin/mmauth.cjs']);
    expect(loaded.builtins).toContain('http');
    expect(loaded.builtins).not.toContain('internal/deps/undici/undici');
    expect(loaded.builtins).not.toContain(ES_MODULE_JOB);
  });

  it('`revoke` goes through oauth4webapi, vendored under dist/vendor', async () => {
    // Token info first (not through oauth4webapi), then the revocation itself, which is.
    const emulator = await startTestEmulator();
    const loaded = await recordLoads(['revoke', '--client-id', 'c'], {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_SECRET: 's',
      MMAUTH_TOKEN: 't',
    });
    expect(loaded.code).toBe(0);
    expect(loaded.files).toEqual(['bin/mmauth.cjs', 'dist/vendor/oauth4webapi.cjs']);
    expect(loaded.builtins).not.toContain(ES_MODULE_JOB);
  });

  it('storing a token loads nothing beside the bundle: conf and proper-lockfile are in it, without their unused parts (issue 26)', async () => {
    const configDir = makeConfigDir();
    const loaded = await recordLoads(
      ['login', '--with-token', '--no-verify', '--base-url', 'http://127.0.0.1:9', '--insecure-storage'],
      { MMAUTH_CONFIG_DIR: configDir },
      'a-token-0123456789\n',
    );
    expect(loaded.code).toBe(0);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toContain('a-token-0123456789');
    // No graceful-fs, no ajv, no semver: nothing from node_modules, nothing from dist/vendor.
    expect(loaded.files).toEqual(['bin/mmauth.cjs']);
    // conf's encryption (node:crypto) and signal-exit's node:assert load only when used.
    expect(loaded.builtins).not.toContain('crypto');
    expect(loaded.builtins).not.toContain('assert');
    expect(loaded.builtins).not.toContain(ES_MODULE_JOB);
  });
});

describe('the launcher', () => {
  /** A copy of the installed package (bin, dist, package.json) that a test may damage. */
  function copyOfPackage(): string {
    const copy = mkdtempSync(join(tmpdir(), 'mmauth-package-'));
    onTestFinished(() => rmSync(copy, REMOVE_TREE));
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    return copy;
  }

  /** `mmauth token` run from the copy `copy`, with `env` over a clean environment. */
  async function tokenFromCopy(copy: string, env: Record<string, string>) {
    const child = spawn(process.execPath, [join(copy, 'bin', 'mmauth.cjs'), 'token'], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    return { code, stdout, stderr };
  }

  it.each([
    ['damaged', Buffer.from('not a V8 code cache at all')],
    ['missing', undefined],
  ])('a %s code cache costs speed, never correctness', async (_, content) => {
    const copy = copyOfPackage();
    mkdirSync(join(copy, 'dist', 'cache', process.version), { recursive: true });
    for (const name of ['mmauth.cjs.cache', 'token.cache']) {
      const cache = join(copy, 'dist', 'cache', process.version, name);
      if (content === undefined) rmSync(cache, { force: true });
      else writeFileSync(cache, content);
    }
    const result = await tokenFromCopy(copy, { MMAUTH_CONFIG_DIR: await configWithToken() });
    expect(result).toEqual({ code: 0, stdout: 'a-stored-token-0123456789\n', stderr: '' });
  });

  it("the code caches are keyed by the Node version that built them: this Node uses its own, another Node's is never read", async () => {
    const copy = copyOfPackage();
    const launch = async (version: string) => {
      const result = await tokenFromCopy(copy, {
        MMAUTH_CONFIG_DIR: await configWithToken(),
        MMAUTH_DEBUG_CODE_CACHE: '1',
      });
      expect(result.stdout).toBe('a-stored-token-0123456789\n');
      expect(result.code).toBe(0);
      return result.stderr.replaceAll(join(copy, 'dist', 'cache', version), '<cache>').trim();
    };
    // The build ran on one Node (CI runs the suite on Node 24 against the build Node 20 made).
    const [builtBy, ...others] = readdirSync(join(copy, 'dist', 'cache'));
    expect(others).toEqual([]);
    expect(builtBy).toMatch(/^v\d+\.\d+\.\d+$/);
    if (builtBy === process.version) {
      expect(await launch(process.version)).toBe('code cache: used <cache>/token.cache');
      // What another Node finds: the caches a build under it made, none under its own name.
      renameSync(join(copy, 'dist', 'cache', process.version), join(copy, 'dist', 'cache', 'v0.0.1'));
    }
    expect(await launch(process.version)).toBe('code cache: none <cache>');
  });

  it('a reader that goes away early (`mmauth --help | head -c 0`) is no error', async () => {
    const child = spawn(process.execPath, [BIN, 'completion', 'bash'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
