/**
 * A hostile program of the same user under `mmauth exec` (the attack run: the config file, the
 * parent's environment and memory, the keyring over the session bus, exec's private directory).
 * Without --sandbox it gets each (the control: the test can fail); under `exec --sandbox` (the
 * system's bubblewrap) it gets none, with a path bus and with an abstract one (refused before
 * anything runs). Under --sandbox --proxy, curl and Python's urllib still reach the API.
 */
import { spawn } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { useSecretService } from '../support/secret-service.js';

type Json = Record<string, any>;

const service = useSecretService();

/** A working directory of the test's own: the engine keeps its placeholders there while the child runs. */
const workDir = () => makeScratchDir('victim-cwd-', 0o755);

/** A PATH directory with links to what the sandbox and its child use, but `missing`. */
function pathWithout(missing: string): string {
  const bin = makeScratchDir('victim-bin-', 0o755);
  for (const program of ['bwrap', 'socat', 'rg', 'sh', 'bash', 'env', 'touch', 'true']) {
    if (program === missing) continue;
    const found = (process.env.PATH ?? '')
      .split(':')
      .map((dir) => join(dir, program))
      .find((path) => existsSync(path));
    if (found !== undefined) symlinkSync(found, join(bin, program));
  }
  return bin;
}
const HOSTILE = resolve(import.meta.dirname, '../support/attacker/hostile-child.mjs');

/** A code-flow login with the keyring (credentials sealed, the key on the test bus); the environment exec then runs with. */
async function keyringLogin(store: 'keyring' | 'file' = 'keyring') {
  const emulator = await startTestEmulator({ autoApprove: true });
  const configDir = makeConfigDir();
  const env = {
    ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }),
    DBUS_SESSION_BUS_ADDRESS: service.address,
    MMAUTH_CREDENTIAL_STORE: store,
  };
  const login = await runCli(['login'], { env });
  expect(login.code, login.stderr).toBe(0);
  return { emulator, configDir, env: { ...env, PATH: process.env.PATH ?? '' } };
}

/** Runs the hostile child under `mmauth exec ARGS` and returns what it printed. */
async function hostile(args: string[], env: Record<string, string | undefined>, configDir: string, busAddress: string) {
  const secret = env.MMAUTH_CLIENT_SECRET ?? '';
  const result = await runCli(['exec', ...args, '--', process.execPath, HOSTILE, configDir, busAddress, secret], {
    env,
    cwd: workDir(),
    timeoutMs: 30_000,
  });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Json;
}

describe('exec --sandbox against a hostile child', () => {
  it("without --sandbox (the control) the child gets the config, the secret in a parent's environment, mmauth's memory and the keyring; under --sandbox none of them", async () => {
    const { configDir, env } = await keyringLogin();
    const open = await hostile([], env, configDir, service.address);
    expect(open).toMatchObject({
      configByPath: true,
      configByEnv: true,
      secretInProcEnviron: true,
      mmauthMem: true,
    });
    expect(open.keyringSecrets).toBeGreaterThan(0);

    const boxed = await hostile(['--sandbox'], env, configDir, service.address);
    expect(boxed).toMatchObject({
      configByPath: false,
      configByEnv: false,
      secretInEnv: false,
      secretInProcEnviron: false,
      mmauthMem: false,
      keyringSecrets: 0,
    });
    // exec's private directory holds the child's token and nothing else.
    expect(boxed.privateDir).toEqual(['token']);
  });

  it('--sandbox --serve and --sandbox --proxy: the same routes closed; the child still gets its token, and curl and Python reach the API through MMAUTH_API_URL', async () => {
    const { configDir, env } = await keyringLogin();
    const served = await hostile(['--sandbox', '--serve'], env, configDir, service.address);
    expect(served).toMatchObject({
      configByPath: false,
      secretInProcEnviron: false,
      mmauthMem: false,
      keyringSecrets: 0,
    });
    expect([...served.privateDir].sort()).toEqual(['token', 'token.sock']);
    const proxied = await hostile(['--sandbox', '--proxy'], env, configDir, service.address);
    expect(proxied).toMatchObject({
      configByPath: false,
      secretInProcEnviron: false,
      mmauthMem: false,
      keyringSecrets: 0,
    });
    const script =
      'curl -s -o /dev/null -w "%{http_code} " "$MMAUTH_API_URL/api/me"; ' +
      "python3 -c \"import os, urllib.request; print(urllib.request.urlopen(os.environ['MMAUTH_API_URL'] + '/api/me').status)\"";
    const result = await runCli(['exec', '--sandbox', '--proxy', '--', 'sh', '-c', script], {
      env,
      cwd: workDir(),
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('200 200');
  });

  it('a session bus on an abstract socket: under --sandbox the child cannot reach it (a network namespace of its own, no Unix socket); without --sandbox it does', async () => {
    // Credentials in the file: the abstract bus below has no keyring of its own.
    const { env } = await keyringLogin('file');
    const name = `mmauth-test-${process.pid}-${Date.now()}`;
    const daemon = spawn(
      'dbus-daemon',
      ['--session', '--nofork', '--print-address', `--address=unix:abstract=${name}`],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    onTestFinished(() => void daemon.kill());
    const address = await new Promise<string>((resolvePromise) =>
      daemon.stdout.once('data', (chunk: Buffer) => resolvePromise(chunk.toString().trim())),
    );
    const abstractEnv = { ...env, DBUS_SESSION_BUS_ADDRESS: address };
    // (Python: Node pads an abstract name with NULs and misses it.)
    const reach = `import socket\ntry:\n  s = socket.socket(socket.AF_UNIX); s.connect('\\0${name}'); print('reached')\nexcept OSError:\n  print('unreachable')`;
    const boxed = await runCli(['exec', '--sandbox', '--', 'python3', '-c', reach], {
      env: abstractEnv,
      cwd: workDir(),
    });
    expect(boxed.code, boxed.stderr).toBe(0);
    expect(boxed.stdout.trim()).toBe('unreachable');
    // The control: without the sandbox the child connects to the abstract bus.
    const open = await runCli(['exec', '--', 'python3', '-c', reach], { env: abstractEnv });
    expect(open.stdout.trim()).toBe('reached');
  });

  it.each([
    ['bwrap', 'bubblewrap'],
    ['socat', 'socat'],
    ['rg', 'ripgrep'],
  ])(
    'without %s on PATH, --sandbox is sandbox_unavailable (exit 2, one error document under --json) naming the package %s, and runs nothing',
    async (program, pkg) => {
      const { env } = await keyringLogin('file');
      const marker = join(makeScratchDir('victim-marker-'), 'ran');
      const bin = pathWithout(program);
      const result = await runCli(['exec', '--sandbox', '--', '/usr/bin/touch', marker], {
        env: { ...env, PATH: bin },
        cwd: workDir(),
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${program} (package ${pkg}) not on PATH`);
      expect(result.stderr).toContain(`apt install ${pkg}`);
      const json = await runCli(['exec', '--sandbox', '--json', '--', '/usr/bin/touch', marker], {
        env: { ...env, PATH: bin },
        cwd: workDir(),
      });
      expect(json.code).toBe(2);
      expect((JSON.parse(json.stdout) as Json).error.code).toBe('sandbox_unavailable');
      expect(existsSync(marker)).toBe(false);
    },
  );

  it("signals and the exit code as exec gives them: the child's exit code passes through, SIGTERM reaches it (128 + 15)", async () => {
    const { env } = await keyringLogin();
    expect((await runCli(['exec', '--sandbox', '--', 'sh', '-c', 'exit 7'], { env, cwd: workDir() })).code).toBe(7);
    const { startCli } = await import('../support/cli.js');
    const running = startCli(
      ['exec', '--sandbox', '--', 'sh', '-c', 'trap "echo got-term; exit 143" TERM; echo ready; sleep 20 & wait'],
      {
        env,
        cwd: workDir(),
        timeoutMs: 30_000,
      },
    );
    await running.waitForStdout(/ready/);
    await new Promise((r) => setTimeout(r, 300));
    running.child.kill('SIGTERM');
    const result = await running.done;
    expect(result.stdout).toContain('got-term');
    expect(result.code).toBe(143);
  });
});

describe('doctor and --sandbox', () => {
  it('says whether exec --sandbox works here, and why not (no bubblewrap on PATH)', async () => {
    const configDir = makeConfigDir();
    const check = async (path: string) => {
      const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir, PATH: path } });
      return ((JSON.parse(result.stdout) as Json).checks as Json[]).find((c) => c.name === 'sandbox');
    };
    expect(await check(process.env.PATH ?? '')).toMatchObject({ status: 'ok' });
    const missing = await check(makeScratchDir('mmauth-empty-path-'));
    expect(missing).toMatchObject({ status: 'warn' });
    expect(missing?.detail).toContain('bwrap (package bubblewrap)');
    expect(missing?.fix).toContain('apt install bubblewrap');
  });
});
