/**
 * The permanent attack suite, second table (issue 22's attack run): another user on the machine, a
 * hostile server, a planted file. Each row is the attack as it was tried, and what must hold now:
 * the exit code, that nothing secret was printed or sent, and that nothing stored was lost.
 */
import { rawGet } from '../support/raw-get.js';
import { signalPid } from '../support/signal.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, makeScratchDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { json, startHostileServer } from '../support/hostile-server.js';
import { startListeningFixture } from '../support/listening-fixture.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';

describe('the emulator (users run it on their own machines)', () => {
  it('18: a foreign Host (DNS rebinding) is refused on every route; its own address is served', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    for (const path of ['/oauth2/authorize?client_id=x', '/oauth2/token/info', '/api/me']) {
      expect(await rawGet(emulator.port, path, { host: 'attacker.example' })).toBe(400);
      expect(await rawGet(emulator.port, path, { host: `attacker.example:${emulator.port}` })).toBe(400);
    }
    expect(await rawGet(emulator.port, '/oauth2/token/info', { host: `127.0.0.1:${emulator.port}` })).toBe(401);
    expect(await rawGet(emulator.port, '/oauth2/token/info', { host: `localhost:${emulator.port}` })).toBe(401);
  });

  it('19: memory stays bounded: unauthenticated authorize requests keep at most MAX_SESSIONS sessions, anonymous ones expire', async () => {
    const { MAX_SESSIONS } = await import('../../src/emulator/state.js');
    const emulator = await startTestEmulator();
    for (let i = 0; i < MAX_SESSIONS + 50; i++) emulator.state.session(undefined);
    expect(emulator.state.sizes().sessions).toBe(MAX_SESSIONS);
    emulator.advanceSeconds(601);
    emulator.state.session(undefined);
    expect(emulator.state.sizes().sessions).toBe(1);
  });

  it('3: a code issued without a PKCE challenge is refused when a verifier comes with it (invalid_grant), as the real server does', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const redirectUri = 'http://127.0.0.1:40000/callback';
    const url = new URL('/oauth2/authorize', emulator.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: emulator.client.clientId,
      redirect_uri: redirectUri,
      state: 's',
    }).toString();
    const approved = await fetch(url, { redirect: 'manual' });
    const code = new URL(approved.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const verifier = 'v'.repeat(43);
    const response = await fetch(`${emulator.baseUrl}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_grant');
  });
});

describe('api and the network', () => {
  /** A profile bound to a listening fixture that counts connections, with a token mmauth would send. */
  async function profileOnFixture() {
    const fixture = await startListeningFixture();
    const configDir = makeConfigDir();
    const accessToken = 'a'.repeat(43);
    writeProfiles(configDir, {
      default: { base_url: fixture.baseUrl, client_id: 'app', token: storedToken(accessToken, inS(3600)) },
    });
    return { fixture, env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' }, accessToken };
  }

  it('4: api obeys the base-URL rules of every other command: plain http to a non-loopback host is exit 2 before any connection', async () => {
    const { env, fixture, accessToken } = await profileOnFixture();
    for (const baseUrl of ['http://example.invalid', 'http://u:p@127.0.0.1:1', `${fixture.baseUrl}/?x=1`]) {
      const result = await runCli(['api', '/api/me'], {
        env: { ...env, MMAUTH_TOKEN: accessToken, MMAUTH_BASE_URL: baseUrl },
      });
      expect(result.code, `${baseUrl}: ${result.stderr}`).toBe(2);
      expect(result.stderr).not.toContain(accessToken);
    }
    expect(fixture.connections()).toBe(0);
  });

  it.each([
    ['-H "Host: other.example"', ['-H', 'Host: other.example']],
    ['-H "Transfer-Encoding: chunked"', ['-H', 'Transfer-Encoding: chunked']],
    ['-H "Content-Length: 5"', ['-H', 'Content-Length: 5']],
    ['-H "Connection: upgrade"', ['-H', 'Connection: upgrade']],
    ['-H "Upgrade: websocket"', ['-H', 'Upgrade: websocket']],
  ])('7: api %s cannot reroute or reframe the request: exit 2 invalid_header, nothing sent', async (_name, args) => {
    const { env, fixture } = await profileOnFixture();
    const result = await runCli(['api', '/api/me', ...args], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("is mmauth's");
    expect(fixture.connections()).toBe(0);
  });

  it.each([
    ['/dev/zero', '@/dev/zero'],
    ['/dev/urandom', '@/dev/urandom'],
  ])('6: api -d @%s is read with the 10 MiB cap: exit 2 input_too_large at once, nothing sent', async (_name, data) => {
    const { env, fixture } = await profileOnFixture();
    const started = Date.now();
    const result = await runCli(['api', '/api/echo', '-d', data], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('larger than 10 MiB');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fixture.connections()).toBe(0);
  });

  it.each([
    ['api blob:http://…', ['api', 'blob:http://127.0.0.1:1/x'], {}],
    ["api -X 'GET /x'", ['api', '/api/me', '-X', 'GET /x'], {}],
    ['a header with a control character', ['api', '/api/me', '-H', 'X-A: b\u0007c'], {}],
    ['a javascript: base URL', ['api', '/api/me'], { MMAUTH_BASE_URL: 'javascript:alert(1)' }],
    ["MMAUTH_BASE_URL='http://[::1'", ['api', '/api/me'], { MMAUTH_BASE_URL: 'http://[::1' }],
    ["info with MMAUTH_BASE_URL='http://[::1'", ['info'], { MMAUTH_BASE_URL: 'http://[::1' }],
  ])(
    '20: %s is a usage error naming the input (exit 2), never a network error or "unexpected failure"',
    async (_name, args, extra) => {
      const { env, fixture } = await profileOnFixture();
      const result = await runCli(args as string[], { env: { ...env, ...extra } });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).not.toContain('unexpected failure');
      expect(fixture.connections()).toBe(0);
    },
  );

  it('9: a token issued already expired (expires_in 0) is never handed out: exit 4 naming the lifetime', async () => {
    const server = await startHostileServer({
      'POST /oauth2/token': json({
        access_token: 'n'.repeat(43),
        token_type: 'Bearer',
        expires_in: 0,
        refresh_token: 'r'.repeat(43),
      }),
      'GET /oauth2/token/info': json({ error: 'invalid_token' }, 401),
    });
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      default: {
        base_url: server.baseUrl,
        client_id: 'app',
        client_secret: 'secret-secret-secret',
        token: { ...storedToken('o'.repeat(43), inS(-10)), refresh_token: 'p'.repeat(43) },
      },
    });
    const result = await runCli(['token'], { env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' } });
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('already expired (a lifetime of 0 s)');
  });
});

describe('two-step login', () => {
  it('1: login --complete goes only to the server the login started at: another base URL (flag or env) is exit 2 before any connection, nothing rebound', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    const start = await runCli(['login', '--start', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const url = (JSON.parse(start.stdout) as { authorization_url: string }).authorization_url;
    const redirect = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const fixture = await startListeningFixture();
    for (const how of ['flag', 'env', 'replace'] as const) {
      const args = ['login', '--complete', redirect, ...(how === 'env' ? [] : ['--base-url', fixture.baseUrl])];
      const result = await runCli(how === 'replace' ? [...args, '--replace'] : args, {
        env: how === 'env' ? { ...env, MMAUTH_BASE_URL: fixture.baseUrl } : env,
      });
      expect(result.code, `${how}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`was started at ${emulator.baseUrl}`);
    }
    expect(fixture.connections()).toBe(0);
    const genuine = await runCli(['login', '--complete', redirect], { env });
    expect(genuine.code, genuine.stderr).toBe(0);
  });
});

describe('secrets are redacted in everything mmauth prints, not only in the trace', () => {
  /** A token endpoint whose error_description echoes the request it got, as a careless server does. */
  async function startEchoingServer() {
    const holder: { requests: Array<{ body: string }> } = { requests: [] };
    const server = await startHostileServer({
      'POST /oauth2/token': (_req, res) => {
        const body = holder.requests.at(-1)?.body ?? '';
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request', error_description: `you sent ${body}` }));
      },
    });
    holder.requests = server.requests;
    return server;
  }

  it('8: a server echoing the request puts no client secret into the error line or the --json error', async () => {
    const server = await startEchoingServer();
    const secret = 'client-secret-to-keep-0123456789';
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_BASE_URL: server.baseUrl, MMAUTH_CLIENT_ID: 'app' };
    for (const args of [['client-credentials'], ['client-credentials', '--json']]) {
      const result = await runCli([...args, '--client-secret-stdin'], { env, input: `${secret}\n` });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('you sent');
      expect(`${result.stdout}${result.stderr}`).not.toContain(secret);
      expect(`${result.stdout}${result.stderr}`).not.toContain(encodeURIComponent(secret).replace(/-/g, '%2D'));
    }
  });

  it('8: a server echoing a refresh request puts no refresh token or stored secret into anything printed', async () => {
    const server = await startEchoingServer();
    const configDir = makeConfigDir();
    const refreshToken = 'r'.repeat(20) + 'refresh-secret';
    writeProfiles(configDir, {
      default: {
        base_url: server.baseUrl,
        client_id: 'app',
        client_secret: 'stored-client-secret-000',
        token: { ...storedToken('o'.repeat(43), inS(-10)), refresh_token: refreshToken },
      },
    });
    const result = await runCli(['token', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).not.toBe(0);
    const printed = `${result.stdout}${result.stderr}`;
    expect(printed).toContain('you sent');
    expect(printed).not.toContain('refresh-secret');
    expect(printed).not.toContain('stored-client-secret-000');
  });

  it('8: api error lines never print credential-like query values; the trace redacts X-Api-Key and X-Auth-Token', async () => {
    const { env } = await (async () => {
      const configDir = makeConfigDir();
      writeProfiles(configDir, {
        default: { base_url: 'http://127.0.0.1:1', client_id: 'app', token: storedToken('a'.repeat(43), inS(3600)) },
      });
      return { env: { MMAUTH_CONFIG_DIR: configDir } };
    })();
    const result = await runCli(
      [
        'api',
        '/api/me?access_token=query-token-value&api_key=query-key-value',
        '-H',
        'X-Api-Key: header-key-value',
        '-H',
        'X-Auth-Token: header-token-value',
        '--verbose',
        '--timeout',
        '2',
      ],
      { env },
    );
    expect(result.code).toBe(3);
    for (const value of ['query-token-value', 'query-key-value', 'header-key-value', 'header-token-value']) {
      expect(result.stderr).not.toContain(value);
    }
  });

  it('5: a proxy password never appears in doctor lines, its --json detail, or any network error', async () => {
    const env = {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: 'https://maps.example.invalid',
      MMAUTH_CLIENT_ID: 'app',
      HTTPS_PROXY: 'http://proxyuser:pa55word-proxy@127.0.0.1:1',
      NO_PROXY: '',
    };
    for (const args of [
      ['doctor', '--timeout', '2'],
      ['doctor', '--json', '--timeout', '2'],
      ['info', '--timeout', '2'],
      ['info', '--json', '--timeout', '2'],
    ]) {
      const result = await runCli(args, { env: { ...env, MMAUTH_TOKEN: 'a'.repeat(43) } });
      expect(`${result.stdout}${result.stderr}`).not.toContain('pa55word-proxy');
      expect(`${result.stdout}${result.stderr}`).not.toContain('proxyuser:');
    }
  });
});

describe('the store: a planted file', () => {
  it('10: a config.json.lock.pid planted as a link is never written through; its target is untouched', async () => {
    const { readFileSync, symlinkSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const victim = join(makeScratchDir('mmauth-victim-'), 'precious');
    writeFileSync(victim, 'precious contents');
    symlinkSync(victim, join(configDir, 'config.json.lock.pid'));
    const result = await runCli(['client-credentials', '--replace'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious contents');
  });

  it('10: a planted regular config.json.lock is named at once ("not a lock mmauth made"), not waited on', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    writeFileSync(join(configDir, 'config.json.lock'), '');
    const started = Date.now();
    const result = await runCli(['client-credentials', '--replace'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('not a lock mmauth made');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each([
    ['an access token holding terminal escapes', { access_token: 'abc\u001b]0;PWNED\u0007def' }, 'token.access_token'],
    ['an expires_at that is not a date', { expires_at: 'not-a-date' }, 'token.expires_at'],
    ['a refresh token with a space', { refresh_token: 'a b c d e f g' }, 'token.refresh_token'],
  ])(
    '16: a stored value mmauth did not write (%s) is store_malformed (exit 1) naming the profile and field, never printed',
    async (_name, patch, field) => {
      const configDir = makeConfigDir();
      writeProfiles(configDir, {
        work: {
          base_url: 'http://127.0.0.1:1',
          client_id: 'app',
          token: { ...storedToken('a'.repeat(43), inS(3600)), ...patch },
        },
      });
      for (const command of [['token'], ['header'], ['status']]) {
        const result = await runCli([...command, '--profile', 'work'], { env: { MMAUTH_CONFIG_DIR: configDir } });
        expect(result.code, `${command[0]}: ${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(`profiles.work.${field}`);
        expect(result.stdout).toBe('');
        expect(result.stderr).not.toContain('unexpected failure');
        expect(`${result.stdout}${result.stderr}`).not.toMatch(/\u001b\]0;PWNED/);
      }
    },
  );
});

describe('another local user reads process arguments (2)', () => {
  /**
   * A BROWSER that only sits there (its argv readable in /proc, as any local user can read it) and
   * writes its pid, so the test can play the other user: read /proc/PID/cmdline, race the start address.
   */
  async function sleepingBrowser(): Promise<{ command: string; pidFile: string }> {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = makeScratchDir('mmauth-browser-');
    const pidFile = join(dir, 'pid');
    const script = join(dir, 'browser.cjs');
    writeFileSync(
      script,
      // Written whole or not at all (a rename), so the test never reads an empty pid.
      `const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(`${pidFile}.new`)}, String(process.pid)); fs.renameSync(${JSON.stringify(`${pidFile}.new`)}, ${JSON.stringify(pidFile)}); setTimeout(() => {}, 20000);`,
    );
    return { command: `${process.execPath} ${script}`, pidFile };
  }

  async function argvOf(pidFile: string): Promise<string> {
    const { readFileSync, existsSync } = await import('node:fs');
    const { setTimeout: sleep } = await import('node:timers/promises');
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await sleep(50);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    // An empty read would be /proc//cmdline (the kernel's) and, worse, signal 0: the whole group.
    expect(Number.isInteger(pid) && pid > 0, `pid file: ${pid}`).toBe(true);
    onTestFinished(() => signalPid(pid, 'SIGKILL', true));
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.at(-2) ?? '';
  }

  it('the browser argv carries neither state nor the PKCE challenge; taking the start address first makes the genuine browser abort the login (exit 4, nothing stored)', async () => {
    const { startCli } = await import('../support/cli.js');
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const { command, pidFile } = await sleepingBrowser();
    const login = startCli(['login', '--wait', '20'], {
      env: emulator.env(configDir, { BROWSER: command }),
      timeoutMs: 30_000,
    });
    const opened = await argvOf(pidFile);
    expect(opened).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\/[0-9a-f]{32}$/);
    expect(opened).not.toMatch(/state=|code_challenge/);
    // The other user takes the start address first (the login's state and challenge are behind it) ...
    const stolen = await fetch(opened, { redirect: 'manual' });
    expect(stolen.status).toBe(302);
    // ... then the genuine browser arrives: the second request stops the login.
    const genuine = await fetch(opened, { redirect: 'manual' });
    expect(genuine.status).toBe(409);
    const result = await login.done;
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('another program on this machine may have intercepted it');
    const { existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    expect(existsSync(join(configDir, 'config.json'))).toBe(false);
    expect(emulator.requests.some((request) => request.url === '/oauth2/token')).toBe(false);
  });

  it.each([false, true])(
    'a callback injected without the login cookie is refused (403), even with the right state (implicit: %s); the genuine browser then completes',
    async (isImplicit) => {
      const { startCli } = await import('../support/cli.js');
      const { throughStartAddress } = await import('../support/context.js');
      const emulator = await startTestEmulator({ autoApprove: true });
      const configDir = makeConfigDir();
      const { command, pidFile } = await sleepingBrowser();
      const args = ['login', '--wait', '20', ...(isImplicit ? ['--implicit'] : [])];
      const login = startCli(args, { env: emulator.env(configDir, { BROWSER: command }), timeoutMs: 30_000 });
      const opened = await argvOf(pidFile);
      // Suppose the attacker knew the state (the printed URL): without the cookie it is still refused.
      const [printed] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
      const state = new URL(printed).searchParams.get('state') ?? '';
      const redirectUri = new URL(printed).searchParams.get('redirect_uri') ?? '';
      const injected = isImplicit
        ? await fetch(redirectUri, {
            method: 'POST',
            headers: { origin: new URL(redirectUri).origin, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ access_token: 'x'.repeat(43), token_type: 'Bearer', state }).toString(),
          })
        : await fetch(`${redirectUri}?code=attackers-code&state=${state}`);
      expect(injected.status).toBe(403);
      // The genuine browser: the start address, the server, the callback with its cookie.
      const { url, cookie } = await throughStartAddress(opened);
      const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
      const headers = cookie === undefined ? {} : { cookie };
      if (isImplicit) {
        const target = new URL(location);
        await fetch(`${target.origin}${target.pathname}`, {
          method: 'POST',
          headers: { ...headers, origin: target.origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: target.hash.slice(1),
        });
      } else {
        await fetch(location, { headers });
      }
      const result = await login.done;
      expect(result.code, result.stderr).toBe(0);
    },
  );
});
