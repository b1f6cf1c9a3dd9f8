/**
 * What mmauth says must be true and name the next step that works for this profile: mistyped
 * profiles, hints with --profile and the token's origin, and messages that once said more than
 * was known.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { json, startHostileServer } from '../support/hostile-server.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';

describe('mistyped profiles', () => {
  it.each([['info'], ['logout'], ['revoke'], ['token'], ['header']])(
    '%s --profile nosuch: exit 4 saying there is no such profile and listing the known ones',
    async (command) => {
      const emulator = await startTestEmulator();
      const configDir = makeConfigDir();
      writeProfiles(configDir, { ci: { base_url: emulator.baseUrl }, work: { base_url: emulator.baseUrl } });
      const result = await runCli([command, '--profile', 'nosuch'], { env: { MMAUTH_CONFIG_DIR: configDir } });
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('not logged in: there is no profile "nosuch"; known profiles: "ci", "work"');
      expect(result.stdout).toBe('');
      expect(emulator.requests).toHaveLength(0);
    },
  );

  it('--profile "" is a usage error, not the default profile', async () => {
    const result = await runCli(['token', '--profile', ''], { env: { MMAUTH_CONFIG_DIR: makeConfigDir() } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the profile name is empty');
  });
});

describe('hints name the command that works for this profile', () => {
  it('after revoking a client-credentials profile, info says `mmauth client-credentials --profile cc`', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_PROFILE: 'cc' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const token = await runCli(['token'], { env });
    expect((await runCli(['revoke'], { env })).code).toBe(0);
    const info = await runCli(['info'], { env: { ...env, MMAUTH_TOKEN: token.stdout.trim() } });
    expect(info.code).toBe(4);
    expect(info.stderr).toContain('run `mmauth client-credentials --profile cc` to get a new token');
    const status = await runCli(['status'], { env });
    expect(status.stderr).toContain('run `mmauth client-credentials --profile cc`');
  });

  it('an implicit denial says `mmauth login --implicit --profile imp` again', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--implicit', '--profile', 'imp'], {
      env: emulator.env(makeConfigDir(), { BROWSER: HEADLESS_BROWSER, MMAUTH_AGENT_DECISION: 'deny' }),
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('run `mmauth login --implicit --profile imp` again and allow access');
  });

  it('revoke of a personal access token: the client cannot revoke it, logout forgets it (exit 2, nothing sent)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      pat: { base_url: emulator.baseUrl, token: storedToken('p'.repeat(30), undefined, 'personal') },
    });
    const result = await runCli(['revoke', '--profile', 'pat'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "a personal access token can only be revoked where it was created (the service's settings)",
    );
    expect(result.stderr).toContain('`mmauth logout --profile pat` forgets it here');
    expect(result.stderr).not.toContain('client id');
    expect(emulator.requests).toHaveLength(0);
  });
});

describe('messages that say only what is known', () => {
  it('a 500 with an OAuth error body is a server failure (exit 1, try again later), not a refusal', async () => {
    const server = await startHostileServer({
      'POST /oauth2/token': json({ error: 'server_error', error_description: 'boom' }, 500),
    });
    const result = await runCli(['client-credentials', '--base-url', server.baseUrl, '--client-id', 'app'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CLIENT_SECRET: 'secret-0123456789' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the token endpoint failed on the server side (HTTP 500): server_error — boom');
    expect(result.stderr).toContain('try again later');
    expect(result.stderr).not.toContain('refused');
  });

  it('logout of an expired token is not "confirmed": nothing live was revoked', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 60 });
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    emulator.advanceSeconds(120);
    // The words (the JSON fields of this case: grant-lifecycle's "revoke of an expired token").
    const result = await runCli(['logout'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('was already expired or revoked');
    expect(result.stderr).toContain('nothing live to revoke');
    expect(result.stderr).not.toContain('Revoked');
    expect(result.stderr).not.toContain('(confirmed)');
  });

  it('the port-in-use hint suggests letting mmauth pick a port, not the same port again', async () => {
    const emulator = await startTestEmulator();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runCli(['login', '--redirect-uri', `http://127.0.0.1:${port}/callback`], {
        env: emulator.env(makeConfigDir()),
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('omit --redirect-uri to let mmauth pick a free port');
    } finally {
      blocker.close();
    }
  });

  it('a dead proxy is named as the one that refused, not the server', async () => {
    const result = await runCli(['info', '--base-url', 'https://maps.example.test'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_TOKEN: 'x'.repeat(20), HTTPS_PROXY: 'http://127.0.0.1:9' },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('the proxy http://127.0.0.1:9 refused the connection');
  });

  it('a missing secret under CI is named in lower case like every other error', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['client-credentials'], {
      env: emulator.env(makeConfigDir(), { MMAUTH_CLIENT_SECRET: undefined, CI: 'true' }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: client secret is needed and CI is set');
  });

  it('an expired stored token makes status name the command of its origin', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { ci: { token: storedToken('c'.repeat(30), inS(-5), 'client_credentials') } });
    const result = await runCli(['status', '--profile', 'ci'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('run `mmauth client-credentials --profile ci`');
  });
});

describe('a proxy that answers instead of connecting (A14)', () => {
  it('a 407 to the tunnel is named at once (exit 3), not reported as a timeout', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const proxy = createHttpServer();
    proxy.on('connect', (_req, socket) => {
      socket.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="x"\r\nContent-Length: 0\r\n\r\n',
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const startedMs = Date.now();
      const result = await runCli(['info', '--base-url', 'https://maps.example.test', '--timeout', '10'], {
        env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_TOKEN: 'x'.repeat(20), HTTPS_PROXY: proxyUrl },
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`the proxy ${proxyUrl} asks for authentication (HTTP 407)`);
      expect(result.stderr).not.toContain('no complete answer');
      expect(Date.now() - startedMs).toBeLessThan(5_000);
    } finally {
      proxy.close();
    }
  });
});
