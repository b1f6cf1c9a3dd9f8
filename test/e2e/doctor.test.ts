/**
 * `mmauth doctor`: every check with its verdict and fix; exit 0 with warnings alone, 1 when a
 * check failed; never a secret in its output.
 */
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { startHostileServer } from '../support/hostile-server.js';

interface DoctorDocument {
  ok: boolean;
  checks: Array<{ name: string; status: string; detail: string; fix: string | null }>;
}

async function profileOnEmulator() {
  const emulator = await startTestEmulator();
  const configDir = makeConfigDir();
  const env = emulator.env(configDir);
  expect((await runCli(['client-credentials'], { env })).code).toBe(0);
  const bare = { MMAUTH_CONFIG_DIR: configDir };
  return { emulator, configDir, env: bare };
}

const statusOf = (document: DoctorDocument, name: string) =>
  document.checks.find((check) => check.name === name)?.status;

describe('mmauth doctor', () => {
  it('a good profile: every server check ok, exit 0, no secret printed', async () => {
    const { emulator, env } = await profileOnEmulator();
    const result = await runCli(['doctor', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as DoctorDocument;
    expect(document.ok).toBe(true);
    for (const name of [
      'config directory',
      'config file',
      'base URL',
      'token endpoint',
      'clock',
      'authorization',
      'token',
      'loopback',
    ]) {
      expect([name, statusOf(document, name)]).toEqual([name, 'ok']);
    }
    expect(`${result.stdout}${result.stderr}`).not.toContain(emulator.client.clientSecret);
  });

  it.each([
    ['a wrong client id', ['--client-id', 'no-such-client'], 'authorization'],
    ['a config file of mode 0644', [], 'config file'],
    ['a server that is down', [], 'reachable'],
  ])('%s: that check fails, exit 1', async (what, args, failing) => {
    const { emulator, configDir, env } = await profileOnEmulator();
    if (what.startsWith('a config file')) chmodSync(join(configDir, 'config.json'), 0o644);
    if (what.startsWith('a server')) await emulator.close();
    const result = await runCli(['doctor', '--json', ...args], { env });
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout) as DoctorDocument;
    expect(document.ok).toBe(false);
    expect(statusOf(document, failing)).toBe('fail');
    expect(document.checks.find((check) => check.name === failing)?.fix).toEqual(expect.any(String));
  });

  it('a server whose Date is two hours off: the clock check warns, and warnings alone exit 0', async () => {
    const skewed = new Date(Date.now() - 7_200_000).toUTCString();
    const server = await startHostileServer({
      'POST /oauth2/token': (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json', date: skewed });
        res.end('{"error":"invalid_request"}');
      },
      'GET /oauth2/authorize': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<form>Sign in</form>');
      },
    });
    const result = await runCli(['doctor', '--json', '--base-url', server.baseUrl, '--client-id', 'app'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir() },
    });
    const document = JSON.parse(result.stdout) as DoctorDocument;
    expect(statusOf(document, 'clock')).toBe('warn');
    expect(document.checks.find((check) => check.name === 'clock')?.detail).toContain('2h ahead of');
    expect(document.ok).toBe(true);
    expect(result.code).toBe(0);
  });
});
