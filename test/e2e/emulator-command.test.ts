import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, runCli, startCli, REMOVE_TREE } from '../support/cli.js';

interface EmulatorLine {
  base_url: string;
  client_id: string;
  client_secret: string;
  user: { id: number; login: string; password: string };
  personal_access_token: string;
}

async function startEmulatorCli(
  args: string[] = [],
): Promise<{ line: EmulatorLine; stop: () => Promise<number | null>; stderr: () => string }> {
  const emulator = startCli(['emulator', '--port', '0', '--json', ...args], { timeoutMs: 25_000 });
  // Under --json the document on stdout is the signal that it serves; stderr stays quiet (decisions 32).
  const [text] = await emulator.waitForStdout(/^\{.*\}\n/);
  const line = JSON.parse(text) as EmulatorLine;
  return {
    line,
    stderr: () => emulator.stderr(),
    stop: async () => {
      emulator.child.kill('SIGINT');
      return (await emulator.done).code;
    },
  };
}

describe('mmauth emulator', () => {
  it('prints one JSON line with the seeded credentials, serves, and stops with exit 0 on Ctrl-C', async () => {
    const { line, stop, stderr } = await startEmulatorCli();
    expect(Object.keys(line).sort()).toEqual([
      'base_url',
      'client_id',
      'client_secret',
      'personal_access_token',
      'public_client_id',
      'schema_version',
      'user',
    ]);
    expect(line.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(line.user).toEqual({ id: 42, login: 'demo', password: 'demo' });
    const configDir = makeConfigDir();
    const info = await runCli(['info', '--json'], {
      env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: line.base_url, MMAUTH_TOKEN: line.personal_access_token },
    });
    expect(info.code).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ resource_owner_id: 42, expires_in: null });
    expect(info.stderr).toBe('');
    expect(await stop()).toBe(0);
    expect(stderr()).toBe('');
  });

  it('--auto-approve lets any user agent that follows redirects complete a login (curl as BROWSER)', async () => {
    const { line, stop } = await startEmulatorCli(['--auto-approve', '--token-ttl', '0']);
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--json'], {
      env: {
        MMAUTH_CONFIG_DIR: configDir,
        MMAUTH_BASE_URL: line.base_url,
        MMAUTH_CLIENT_ID: line.client_id,
        MMAUTH_CLIENT_SECRET: line.client_secret,
        BROWSER: 'curl -s -o /dev/null -L -c /dev/null',
      },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ expires_in: null, grant: 'authorization_code' });
    expect(await stop()).toBe(0);
  });

  it('--port in use exits 2 naming --port', async () => {
    const { line, stop } = await startEmulatorCli();
    const port = new URL(line.base_url).port;
    const second = await runCli(['emulator', '--port', port]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('--port');
    expect(await stop()).toBe(0);
  });

  it('--state FILE and --client-secret-file: a signed-in profile survives a restart (even after SIGKILL): same secret, the token accepted, the refresh token renews', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmauth-emulator-state-'));
    onTestFinished(() => rmSync(dir, REMOVE_TREE));
    const stateFile = join(dir, 'state.json');
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, 'a-fixed-client-secret-for-tests\n', { mode: 0o600 });
    const args = ['--auto-approve', '--state', stateFile, '--client-secret-file', secretFile];
    const first = startCli(['emulator', '--port', '0', '--json', ...args], { timeoutMs: 25_000 });
    const line = JSON.parse((await first.waitForStdout(/^\{.*\}\n/))[0]) as EmulatorLine;
    expect(line.client_secret).toBe('a-fixed-client-secret-for-tests');
    const configDir = makeConfigDir();
    const env = {
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_CREDENTIAL_STORE: 'file',
      MMAUTH_BASE_URL: line.base_url,
      MMAUTH_CLIENT_ID: line.client_id,
      MMAUTH_CLIENT_SECRET: line.client_secret,
      BROWSER: 'curl -s -o /dev/null -L -c /dev/null',
    };
    expect((await runCli(['login'], { env })).code).toBe(0);
    const token = (await runCli(['token'], { env })).stdout;
    // Killed without a chance to save at exit: what it issued was written after each request.
    first.child.kill('SIGKILL');
    await first.done;
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(stateFile, 'utf8')).toContain(token.trim());
    const port = new URL(line.base_url).port;
    const second = startCli(['emulator', '--port', port, '--json', '--state', stateFile], { timeoutMs: 25_000 });
    const again = JSON.parse((await second.waitForStdout(/^\{.*\}\n/))[0]) as EmulatorLine;
    expect(again.client_secret).toBe(line.client_secret);
    expect(again.personal_access_token).toBe(line.personal_access_token);
    const verified = await runCli(['token', '--verify'], { env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toBe(token);
    const refreshed = await runCli(['refresh'], { env });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect((await runCli(['token'], { env })).stdout).not.toBe(token);
    second.child.kill('SIGINT');
    expect((await second.done).code).toBe(0);
  });

  it("--help's example signs in with the public client (no secret to copy); no example puts a secret on the command line", async () => {
    const help = await runCli(['emulator', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('MMAUTH_CLIENT_ID=mmauth-public mmauth login');
    expect(help.stdout).not.toMatch(/MMAUTH_CLIENT_SECRET=…|--client-secret [^-]/);
  });
});
