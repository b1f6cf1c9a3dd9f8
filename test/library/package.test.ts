/**
 * The library as a user installs it (issue 32): `npm pack`, then a fresh project installs the
 * tarball offline with `npm ci --offline` (its dependencies from the npm cache `npm ci` filled, at
 * our lock's versions: `npm install --offline` would need registry metadata the cache lacks),
 * imports it from an ES module, `require()`s it from CommonJS, and runs docs/examples against the
 * emulator. And the import rule: the library's entry loads no command-line package.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { runCommand, type CommandResult } from '../support/run-command.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The packed package installed in a fresh project: its folder. */
let project = '';

beforeAll(() => {
  const work = mkdtempSync(join(tmpdir(), 'mmauth-pack-'));
  const packed = execFileSync(NPM, ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  }).trim();
  project = join(work, 'consumer');
  execFileSync('mkdir', ['-p', project]);
  // The consumer's lock: the tarball, and our lock's production entries (npm's cache, filled by
  // `npm ci`, holds their tarballs), so that `npm ci --offline` installs as a user would, offline.
  const ours = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; dependencies?: unknown; engines?: unknown; bin?: unknown }>;
  };
  const tarball = `file:../${packed.split('\n').at(-1) ?? ''}`;
  const root = ours.packages[''] ?? {};
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { mmauth: tarball } },
    'node_modules/mmauth': {
      version: '0.1.0',
      resolved: tarball,
      dependencies: root.dependencies,
      engines: root.engines,
      bin: root.bin,
    },
  };
  for (const [path, entry] of Object.entries(ours.packages))
    if (path !== '' && entry.dev !== true) packages[path] = entry;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies: { mmauth: tarball } }),
  );
  writeFileSync(
    join(project, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }),
  );
  execFileSync(NPM, ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--silent'], {
    cwd: project,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  for (const example of readdirSync(join(ROOT, 'docs/examples'))) {
    copyFileSync(join(ROOT, 'docs/examples', example), join(project, example));
  }
  return () => rmSync(work, { recursive: true, force: true });
}, 180_000);

/** Runs `node file` in the consumer project with `env` (asynchronously: the emulator answers from this process). */
function runInProject(file: string | string[], env: Record<string, string>): Promise<CommandResult> {
  return runCommand(process.execPath, typeof file === 'string' ? [file] : file, {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeoutMs: 20_000,
  });
}

/** `node file args…` in the consumer project (runInProject with arguments). */
function runInProjectWithArgs(
  file: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runInProject([file, ...args], env);
}

async function signedIn() {
  const emulator = await startTestEmulator({ autoApprove: true });
  const configDir = makeConfigDir();
  const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
  expect((await runCli(['login'], { env })).code).toBe(0);
  const token = (readConfig(configDir) as any).profiles.default.token.access_token as string;
  return { emulator, configDir, token };
}

describe('the packed library in a fresh project', () => {
  it('imported from an ES module and required from CommonJS: the same token as the CLI stored', async () => {
    const { configDir, token } = await signedIn();
    writeFileSync(
      join(project, 'esm.mjs'),
      "import { getToken } from 'mmauth';\nconsole.log((await getToken()).accessToken);\n",
    );
    writeFileSync(
      join(project, 'cjs.cjs'),
      "const { getToken } = require('mmauth');\ngetToken().then((t) => console.log(t.accessToken));\n",
    );
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      const result = await runInProject(file, { MMAUTH_CONFIG_DIR: configDir });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe(token);
    }
  });

  it("docs/library.md's examples run as written", async () => {
    const { emulator, configDir } = await signedIn();
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: emulator.baseUrl };
    const getToken = await runInProject('get-token.mjs', env);
    expect(getToken.code, getToken.stderr).toBe(0);
    expect(JSON.parse(getToken.stdout)).toEqual({ status: 200, profile: 'default', scope: ['service'] });
    const source = await runInProject('token-source.mjs', { MMAUTH_CONFIG_DIR: configDir });
    expect(source.code, source.stderr).toBe(0);
    expect(JSON.parse(source.stdout)).toEqual({ me: 200, echo: 200, headers: ['Authorization'] });
    const loggedOut = await runInProject('get-token.mjs', {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_PROFILE: 'nobody',
    });
    expect(loggedOut.code).toBe(4);
    expect(loggedOut.stderr).toContain('run `mmauth login`');
  });
});

describe('login() and logout() from the packed library', () => {
  it("docs/examples/login.mjs: signs in through a BROWSER-style user agent, `mmauth token` then prints the same token, logout ends it (token info refuses it); nothing printed but the example's own lines", async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = {
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_CREDENTIAL_STORE: 'file',
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      BROWSER: HEADLESS_BROWSER,
    };
    const signedIn = await runInProject('login.mjs', env);
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stderr).toBe('');
    const lines = signedIn.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const document = JSON.parse(lines[0] ?? '') as { signedIn: string; baseUrl: string; accessToken: string };
    expect(document).toMatchObject({ signedIn: 'default', baseUrl: emulator.baseUrl });
    const cli = await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(`${document.accessToken}\n`);
    // Again with --logout: a new grant replaces the first (ended), then logout() ends the new one.
    const again = await runInProject('login.mjs', env);
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout.trim()) as { accessToken: string };
    const ended = await runInProjectWithArgs('login.mjs', ['--logout'], env);
    expect(ended.code, ended.stderr).toBe(0);
    const [third, result] = ended.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(result).toEqual({ revoked: true, confirmed: true });
    for (const accessToken of [document.accessToken, second.accessToken, third?.accessToken as string]) {
      const info = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(info.status).toBe(401);
    }
    expect(emulator.state.liveTokens().filter((token) => token.grant !== 'personal')).toEqual([]);
  });

  it("docs/examples/device-login.mjs: login({ flow: 'device' }) shows the code through onDeviceCode, and the grant is the CLI's once the complete address is opened", async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper6', deviceIntervalS: 1 });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' }) as Record<string, string>;
    const child = spawn(process.execPath, ['device-login.mjs'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const complete = await new Promise<string>((found, fail) => {
      const timer = setTimeout(() => fail(new Error(`no complete address within 20 s: ${stderr}`)), 20_000);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /or open (\S+)/.exec(stderr);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          found(match[1]);
        }
      });
    });
    expect(stderr).toContain('Enter this code only for a sign-in you started yourself.');
    expect(stderr).toMatch(/enter the code [B-Z]{4}-[B-Z]{4}/);
    expect(await (await fetch(complete)).text()).toContain('Device approved');
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({ signedIn: 'default', baseUrl: emulator.baseUrl });
    const cli = await runCli(['status', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(JSON.parse(cli.stdout).profiles[0]).toMatchObject({ flow: 'device', state: 'valid' });
  }, 60_000);

  it('a confidential client without a secret fails before any browser opens (client_secret_required, exit code 2)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    const result = await runInProject('login.mjs', {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      BROWSER: HEADLESS_BROWSER,
    });
    expect(result.stderr).toMatch(/^client_secret_required: /);
    expect(result.code).toBe(2);
    // At most the probe that tells a confidential client from an unknown one (one GET, no browser).
    expect(
      emulator.requests.filter((request) => request.url.startsWith('/oauth2/authorize')).length,
    ).toBeLessThanOrEqual(1);
  });
});

describe('the import rule of the library entry', () => {
  it('dist/index.js and everything it imports statically load no command-line package', () => {
    const forbidden = /^(commander|@commander-js\/|chalk|@inquirer\/|inquirer|open)(\/|$)/;
    const seen = new Set<string>();
    const found: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      // Static imports only: `import … from '…'` and `export … from '…'` (dynamic import() loads on use).
      for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
        const target = match[1] ?? '';
        if (forbidden.test(target)) found.push(`${file} → ${target}`);
        if (target.startsWith('.')) visit(resolve(dirname(file), target));
      }
    };
    visit(join(ROOT, 'dist/index.js'));
    expect(seen.size).toBeGreaterThan(10);
    expect(found).toEqual([]);
  });
});

describe('mmauth installed from its packed tarball in the project, and exec --sandbox run from there', () => {
  it('the child cannot change the installed mmauth or its dependencies, and the next npx mmauth runs nothing planted (without --sandbox, the control, last: the plant runs)', async () => {
    const markers = mkdtempSync(join(tmpdir(), 'mmauth-pack-markers-'));
    onTestFinished(() => rmSync(markers, REMOVE_TREE));
    const plant = (marker: string) =>
      [
        `line='require("node:fs").writeFileSync(${JSON.stringify(join(markers, marker))}, "ran");'`,
        'for f in node_modules/mmauth/bin/mmauth.cjs node_modules/mmauth/dist/mmauth.cjs node_modules/undici/index.js; do',
        '  printf "%s\\n" "$line" >> "$f" 2>/dev/null && echo "wrote $f"',
        'done',
        'mv node_modules/mmauth node_modules/mmauth-old 2>/dev/null && echo moved',
        'true',
      ].join('\n');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      MMAUTH_TOKEN: 'not-a-real-token',
      MMAUTH_CONFIG_DIR: join(markers, 'config'),
    };
    const bin = join(project, 'node_modules', 'mmauth', 'bin', 'mmauth.cjs');
    const sandboxed = await runCommand(
      process.execPath,
      [bin, 'exec', '--sandbox', '--', 'sh', '-c', plant('sandboxed')],
      {
        cwd: project,
        env,
        timeoutMs: 60_000,
      },
    );
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stdout).toBe('');
    const after = await runCommand(NPM, ['exec', '--offline', '--', 'mmauth', 'token'], {
      cwd: project,
      env,
      timeoutMs: 60_000,
    });
    expect(after.stdout.trim(), after.stderr).toBe('not-a-real-token');
    expect(readdirSync(markers).filter((name) => name !== 'config')).toEqual([]);
    // The control: the same child without --sandbox changes the installation, and the next run runs its code.
    const plain = await runCommand(process.execPath, [bin, 'exec', '--', 'sh', '-c', plant('plain')], {
      cwd: project,
      env,
      timeoutMs: 60_000,
    });
    expect(plain.stdout).toContain('wrote');
    await runCommand(process.execPath, [join(project, 'node_modules', 'mmauth-old', 'bin', 'mmauth.cjs'), 'token'], {
      cwd: project,
      env,
      timeoutMs: 60_000,
    });
    expect(readdirSync(markers)).toContain('plain');
  }, 180_000);
});
