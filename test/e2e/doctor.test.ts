/**
 * `mmauth doctor`: every check with its verdict and fix; exit 0 with warnings alone, 1 when a
 * check failed; never a secret in its output.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator, storedAccessToken } from '../support/emulator.js';
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

describe('mmauth doctor tells the truth (each profile kind)', () => {
  it('a signed-in code-flow profile: authorization checked with an ephemeral port (never the README example), token ok, exit 0', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    expect((await runCli(['login'], { env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) })).code).toBe(0);
    const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as DoctorDocument;
    expect(statusOf(document, 'authorization')).toBe('ok');
    expect(document.checks.find((check) => check.name === 'authorization')?.detail).not.toContain(':8976/');
    expect(statusOf(document, 'token')).toBe('ok');
  });

  it('a grant the server has ended while its expiry says valid: the token check fails ("ended on the server"), exit 1, nothing renewed', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    expect((await runCli(['login'], { env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) })).code).toBe(0);
    emulator.state.revokeToken(storedAccessToken(configDir));
    const before = emulator.requests.length;
    const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(1);
    const token = (JSON.parse(result.stdout) as DoctorDocument).checks.find((check) => check.name === 'token');
    expect(token).toMatchObject({ status: 'fail', fix: expect.stringContaining('mmauth refresh') });
    expect(token?.detail).toContain('ended on the server');
    expect(emulator.requests.slice(before).some((request) => request.body.includes('refresh_token'))).toBe(false);
  });

  it('an ended grant whose token has expired here: a warning that it cannot tell, naming mmauth refresh; never ok, no refresh token spent', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['login'], { env })).code).toBe(0);
    emulator.state.revokeToken(storedAccessToken(configDir));
    const path = join(configDir, 'config.json');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.profiles.default.token.obtained_at = new Date(Date.now() - 7_300_000).toISOString();
    config.profiles.default.token.expires_at = new Date(Date.now() - 100_000).toISOString();
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    const before = emulator.requests.length;
    const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code, result.stderr).toBe(0);
    const token = (JSON.parse(result.stdout) as DoctorDocument).checks.find((check) => check.name === 'token');
    expect(token).toMatchObject({ status: 'warn', fix: expect.stringContaining('mmauth refresh') });
    expect(token?.detail).toContain('cannot be told without spending it');
    expect(emulator.requests.slice(before).some((request) => request.body.includes('refresh_token'))).toBe(false);
  });

  it.each([
    ['doorkeeper5', 'fail', 1],
    ['spec', 'skip', 0],
  ] as const)(
    'a client secret the server no longer accepts (%s): introspection proves it (%s, exit %s); a server without it skips the check',
    async (flavor, status, code) => {
      const emulator = await startTestEmulator({ flavor });
      const configDir = makeConfigDir();
      expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
      const env = { MMAUTH_CONFIG_DIR: configDir };
      const good = JSON.parse((await runCli(['doctor', '--json'], { env })).stdout) as DoctorDocument;
      expect(statusOf(good, 'client secret')).toBe(flavor === 'spec' ? 'skip' : 'ok');
      const client = emulator.state.clients.get(emulator.client.clientId);
      if (client !== undefined) client.clientSecret = 'rotated-on-the-server';
      const result = await runCli(['doctor', '--json'], { env });
      expect(result.code, result.stderr).toBe(code);
      const check = (JSON.parse(result.stdout) as DoctorDocument).checks.find((c) => c.name === 'client secret');
      expect(check?.status).toBe(status);
      if (status === 'fail') expect(check?.fix).toContain('MMAUTH_CLIENT_SECRET');
      expect(result.stdout + result.stderr).not.toContain(emulator.client.clientSecret);
    },
  );

  it('a client-credentials profile on a server without introspection, its token expired: the token check cannot say a renewal will work (warn, naming mmauth refresh), and no browser warning', async () => {
    const emulator = await startTestEmulator({ flavor: 'spec' });
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    const path = join(configDir, 'config.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as { profiles: Record<string, any> };
    config.profiles.default.token.expires_at = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    emulator.advanceSeconds(8_000);
    // The secret was rotated on the server: nothing here can tell.
    const client = emulator.state.clients.get(emulator.client.clientId);
    if (client !== undefined) client.clientSecret = 'rotated-on-the-server';
    const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    const document = JSON.parse(result.stdout) as DoctorDocument;
    expect(statusOf(document, 'client secret')).toBe('skip');
    const token = document.checks.find((c) => c.name === 'token');
    expect(token?.status).toBe('warn');
    expect(token?.detail).toContain('cannot be told');
    expect(token?.fix).toContain('mmauth refresh');
    expect(statusOf(document, 'browser')).toBe('skip');
  });

  it('a base URL with a wrong path (the token endpoint answers 404): fail naming the base URL and its path, exit 1', async () => {
    const { emulator, env } = await profileOnEmulator();
    const result = await runCli(['doctor', '--json', '--base-url', `${emulator.baseUrl}/wrong`], { env });
    expect(result.code).toBe(1);
    const check = (JSON.parse(result.stdout) as DoctorDocument).checks.find((c) => c.name === 'token endpoint');
    expect(check).toMatchObject({ status: 'fail', fix: expect.stringContaining(`${emulator.baseUrl}/wrong`) });
  });
});

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
      'token',
      'loopback',
    ]) {
      expect([name, statusOf(document, name)]).toEqual([name, 'ok']);
    }
    // A client credentials profile never uses the authorization endpoint.
    expect(statusOf(document, 'authorization')).toBe('skip');
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
    // A wrong client id is judged where it is used: a profile that signs in through the authorization endpoint.
    const extra = what.startsWith('a wrong client id') ? ['--base-url', emulator.baseUrl] : [];
    const runEnv = what.startsWith('a wrong client id') ? { MMAUTH_CONFIG_DIR: makeConfigDir() } : env;
    const result = await runCli(['doctor', '--json', ...args, ...extra], { env: runEnv });
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

describe('doctor on a config file it cannot read', () => {
  it('reports the file with its fix and still runs every check that needs no profile (the server named by MMAUTH_BASE_URL, loopback, sandbox): exit 1, valid JSON', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(configDir, 'config.json'), '{"profiles": {', { mode: 0o600 });
    const result = await runCli(['doctor', '--json'], {
      env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: emulator.baseUrl },
    });
    expect(result.code, result.stderr).toBe(1);
    const document = JSON.parse(result.stdout) as DoctorDocument;
    const config = document.checks.find((check) => check.name === 'config file');
    expect(config).toMatchObject({
      status: 'fail',
      fix: 'fix or move the file aside; mmauth never resets it by itself',
    });
    expect(config?.detail).toContain('is not valid JSON');
    expect(statusOf(document, 'token endpoint')).toBe('ok');
    expect(statusOf(document, 'loopback')).toBe('ok');
    expect(statusOf(document, 'sandbox')).toBeDefined();
    expect(document.checks.filter((check) => check.status === 'fail').map((check) => check.name)).toEqual([
      'config file',
    ]);
    // The file is never rewritten by doctor.
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe('{"profiles": {');
  });
});
