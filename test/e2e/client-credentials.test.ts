import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, runCli, startCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator, storedAccessToken } from '../support/emulator.js';

describe('mmauth client-credentials', () => {
  it('gets a token with the client credentials in the body and stores it', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--json', '--scope', 'service userprofile.profile'], {
      env: emulator.env(configDir),
    });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      token_type: 'bearer',
      scope: 'service userprofile.profile',
      expires_in: 7200,
      grant: 'client_credentials',
    });
    expect(json.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const request = new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/token')?.body);
    expect(Object.fromEntries(request)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'mmauth-demo',
      client_secret: emulator.client.clientSecret,
      scope: 'service userprofile.profile',
    });
    expect(readConfig(configDir)).toMatchObject({
      profiles: { default: { token: { access_token: json.access_token, grant: 'client_credentials' } } },
    });
  });

  it('with --no-save prints the token and stores nothing', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--no-save', '--json'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).access_token).toMatch(/^[\w-]{43}$/);
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('stdout carries nothing without --json; the human lines go to stderr with the token masked', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const token = storedAccessToken(configDir);
    expect(result.stderr).not.toContain(token);
    expect(result.stderr).toContain(`${token.slice(0, 4)}…${token.slice(-4)}`);
    expect(result.stderr).not.toContain(emulator.client.clientSecret);
  });

  it('omits expiry when the server sends no expires_in', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 0 });
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--json'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ expires_in: null, expires_at: null });
    expect(summaryLines(result.stderr)).toEqual([]);
    const stored = readConfig(configDir) as { profiles: { default: { token: Record<string, unknown> } } };
    expect(stored.profiles.default.token).not.toHaveProperty('expires_at');
  });

  it.each([
    [
      '--client-secret-file',
      (dir: string, secret: string) => {
        const file = join(dir, '..', 'secret.txt');
        writeFileSync(file, `${secret}\n`);
        return { args: ['--client-secret-file', file], input: undefined };
      },
    ],
    [
      '--client-secret-stdin',
      (_dir: string, secret: string) => ({ args: ['--client-secret-stdin'], input: `${secret}\n` }),
    ],
  ])('reads the secret from %s', async (_name, source) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const { args, input } = source(configDir, emulator.client.clientSecret);
    const result = await runCli(['client-credentials', '--no-save', ...args], {
      env: emulator.env(configDir, { MMAUTH_CLIENT_SECRET: undefined }),
      ...(input === undefined ? {} : { input }),
    });
    expect(result.code).toBe(0);
  });

  it('exits 4 on a wrong secret and stores nothing', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials'], {
      env: emulator.env(configDir, { MMAUTH_CLIENT_SECRET: 'nope' }),
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/invalid_client/);
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it.each([
    ['an unknown scope', ['--scope', 'admin'], 2, /invalid_scope/],
    ['commas between scopes', ['--scope', 'service,userinfo.email'], 2, /separated by spaces/],
    ['a bad profile name', ['--profile', 'no/slash'], 2, /invalid profile name/],
    ['no client id', ['--client-id', ' '], 2, /no client id/],
  ])('exits 2 on %s', async (_name, args, code, message) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', ...args], {
      env: emulator.env(configDir, args.includes('--client-id') ? { MMAUTH_CLIENT_ID: undefined } : {}),
    });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('exits 3 with a one-line error when nothing listens at the base URL', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    await emulator.close();
    const result = await runCli(['client-credentials'], { env: emulator.env(configDir) });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: POST http:\/\/127\.0\.0\.1:\d+\/oauth2\/token: connection refused$/m);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('mmauth client-credentials against a server that never answers', () => {
  it('gives up after --timeout with exit 3, and Ctrl-C ends the wait with exit 130', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    onTestFinished(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const env = {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: baseUrl,
      MMAUTH_CLIENT_ID: 'x',
      MMAUTH_CLIENT_SECRET: 'y',
    };

    const started = Date.now();
    const timedOut = await runCli(['client-credentials', '--timeout', '1'], { env });
    expect(timedOut.code).toBe(3);
    expect(timedOut.stderr).toMatch(/no complete answer within 1 s/);
    expect(Date.now() - started).toBeLessThan(8_000);

    const waiting = startCli(['client-credentials', '--timeout', '30'], { env });
    // The second connection is this run's request, now hanging.
    await expect.poll(() => sockets.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    waiting.child.kill('SIGINT');
    const interrupted = await waiting.done;
    expect(interrupted.code).toBe(130);
    expect(interrupted.stderr).toContain('interrupted');
  });
});
