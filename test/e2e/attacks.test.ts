/**
 * Attacks that once succeeded, kept as a permanent table: each row is what an attacker (a local
 * process, a web page, a hostile server, a planted input) did, and what mmauth must do instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli, startCli } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { json, startHostileServer } from '../support/hostile-server.js';
import { rawGet } from '../support/raw-get.js';

const AUTHORIZE_URL = /http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/;
/** What a terminal would obey: ESC, BEL, C1 controls, bidi overrides. */
const TERMINAL_CONTROLS = /[\u0007\u001b\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('attacks on login', () => {
  it('A1: a request the listener cannot parse gets 400; the login goes on and completes', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const login = startCli(['login', '--no-browser', '--wait', '15'], { env: emulator.env(makeConfigDir()) });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const port = Number(new URL(new URL(url).searchParams.get('redirect_uri') ?? '').port);
    expect(await rawGet(port, '//a:99999/')).toBe(400);
    const approved = await fetch(url, { redirect: 'manual' });
    await fetch(approved.headers.get('location') ?? '');
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/TypeError|^\s+at /m);
  });

  it('A2: escape sequences in an unauthenticated implicit redirect are never echoed', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const login = startCli(['login', '--implicit', '--no-browser', '--wait', '15'], {
      env: emulator.env(makeConfigDir()),
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';
    const iss = '\u001b]0;PWNED\u0007\u001b[2J\u202eforged';
    await fetch(redirectUri, {
      method: 'POST',
      headers: { origin: new URL(redirectUri).origin },
      body: new URLSearchParams({ iss, access_token: 'x'.repeat(30), token_type: 'Bearer', state: 'wrong' }).toString(),
    });
    await login.waitForStderr(/not accepted: callback rejected: unexpected "state" value/);
    login.child.kill('SIGINT');
    const result = await login.done;
    expect(result.stderr).not.toContain('PWNED');
    expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
  });

  it('A4: the browser command does not inherit MMAUTH_CLIENT_SECRET or MMAUTH_TOKEN', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const dump = join(configDir, '..', 'browser-env.txt');
    const result = await runCli(['login', '--wait', '1'], {
      env: emulator.env(configDir, { BROWSER: `sh -c 'env > ${dump}' sh`, MMAUTH_TOKEN: 'token-secret-0123456789' }),
      timeoutMs: 10_000,
    });
    expect(result.code).toBe(3);
    const seen = readFileSync(dump, 'utf8');
    expect(seen).toContain('MMAUTH_BASE_URL=');
    expect(seen).not.toContain(emulator.client.clientSecret);
    expect(seen).not.toContain('token-secret-0123456789');
  });
});

describe('attacks through what a server says', () => {
  it('A3: control characters, C1 and bidi overrides in error_description reach the terminal escaped', async () => {
    const server = await startHostileServer({
      'POST /oauth2/token': json(
        { error: 'invalid_client', error_description: 'bad\u001b]52;c;cGF5bG9hZA==\u0007\u009b2J\u202eevil' },
        401,
      ),
    });
    const result = await runCli(['client-credentials', '--base-url', server.baseUrl, '--client-id', 'app'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CLIENT_SECRET: 'secret-0123456789' },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
    expect(result.stderr).toContain('bad\\x1b]52;c;cGF5bG9hZA==\\x07\\x9b2J\\u202eevil');
  });

  it('A11: an access_token of spaces is refused (exit 1), nothing stored', async () => {
    const server = await startHostileServer({
      'POST /oauth2/token': json({ access_token: ' ', token_type: 'Bearer' }),
    });
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--base-url', server.baseUrl, '--client-id', 'app'], {
      env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: 'secret-0123456789' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('"access_token" is missing or not a printable string');
  });

  it('#10: every request says mmauth/<version> as its User-Agent, the code flow’s too', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const version = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).version;
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials', '--profile', 'ci'], { env: emulator.env(configDir) })).code).toBe(0);
    const login = startCli(['login', '--no-browser', '--wait', '15'], { env: emulator.env(configDir) });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    await fetch((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
    expect((await login.done).code).toBe(0);
    const fromMmauth = emulator.requests.filter((r) => r.method === 'POST');
    expect(fromMmauth).toHaveLength(2);
    for (const r of fromMmauth) expect(r.headers['user-agent']).toBe(`mmauth/${version}`);
  });
});

describe('attacks through input', () => {
  it.each([
    ['A10: --wait past what a timer holds', ['login', '--wait', '3000000'], {}],
    ['A10: --timeout past what a timer holds', ['info', '--timeout', '4294968'], {}],
    ['A11: MMAUTH_TOKEN with CR LF (a header injection)', ['header'], { MMAUTH_TOKEN: 'tok\r\nX-Injected: 1' }],
    [
      'A12: a base URL ending in a bare ?',
      ['info', '--base-url', 'http://127.0.0.1:9/?'],
      { MMAUTH_TOKEN: 'x'.repeat(20) },
    ],
    [
      'A12: a base URL ending in a bare #',
      ['info', '--base-url', 'http://127.0.0.1:9/#'],
      { MMAUTH_TOKEN: 'x'.repeat(20) },
    ],
  ])('%s: exit 2, nothing on stdout, no trace', async (_what, args, env) => {
    const result = await runCli(args, { env: { MMAUTH_CONFIG_DIR: makeConfigDir(), ...env } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(/^\s+at |Warning/m);
  });

  it('A10: standard input past 64 KiB is refused (exit 2), not read without end', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--with-token'], {
      env: emulator.env(makeConfigDir()),
      input: 'x'.repeat(200_000),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('standard input is larger than 64 KiB');
  });

  it.each(['__proto__', 'constructor', 'toString'])('A11: --profile %s is a name like any other', async (name) => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const stored = await runCli(['client-credentials', '--profile', name], { env: emulator.env(configDir) });
    expect(stored.code, stored.stderr).toBe(0);
    expect(Object.keys((readConfig(configDir) as { profiles: object }).profiles)).toEqual([name]);
    const token = await runCli(['token', '--profile', name], { env: emulator.env(configDir) });
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toMatch(/^\S{20,}\n$/);
  });
});

describe('attacks on the emulator', () => {
  it.each([
    ['A8: a request target that is no URL', (port: number) => rawGet(port, '//a:99999/')],
    [
      'A8: Basic credentials with bad %-encoding',
      (port: number) =>
        rawGet(port, '/oauth2/token/info', { authorization: `Basic ${Buffer.from('a:%zz').toString('base64')}` }),
    ],
  ])('%s: 4xx, and the emulator keeps serving', async (_what, attack) => {
    const emulator = await startTestEmulator();
    const status = await attack(emulator.port);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect((await fetch(`${emulator.baseUrl}/oauth2/token/info`)).status).toBe(401);
  });

  it('A8: Basic with bad %-encoding at the token endpoint, and a sign-in whose return_to holds CR LF', async () => {
    const emulator = await startTestEmulator();
    const basic = await fetch(`${emulator.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('mmauth-demo:%zz').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    expect(basic.status).toBe(401);
    const signIn = await fetch(`${emulator.baseUrl}/oauth2/sign_in`, {
      method: 'POST',
      body: new URLSearchParams({
        return_to: '/oauth2/authorize?x=1\r\nSet-Cookie: a=b',
        authenticity_token: 'x',
        login: 'demo',
        password: 'demo',
      }),
    });
    expect(signIn.status).toBe(403);
    expect((await fetch(`${emulator.baseUrl}/oauth2/token/info`)).status).toBe(401);
  });
});

describe('honest failures of the transport (A14)', () => {
  it('an answer that is not HTTP is a malformed answer (exit 1), not a network failure', async () => {
    const { createServer } = await import('node:net');
    const server = createServer((socket) => socket.end('HTTP/1.1 200 OK\r\nBad Header Token: x\r\n\r\n{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await runCli(['info', '--base-url', `http://127.0.0.1:${port}`], {
        env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_TOKEN: 'x'.repeat(20) },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/the answer is not valid HTTP \(HPE_/);
    } finally {
      server.close();
    }
  });

  it('token info under a non-JSON content type is refused (exit 1), as at the token endpoint', async () => {
    const server = await startHostileServer({
      'GET /oauth2/token/info': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(
          JSON.stringify({ resource_owner_id: 1, scope: ['service'], expires_in_seconds: 60, application: { uid: 1 } }),
        );
      },
    });
    const result = await runCli(['info', '--base-url', server.baseUrl], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_TOKEN: 'x'.repeat(20) },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('its content type is "text/plain", not application/json');
  });
});

describe('endless input while login waits (A10)', () => {
  it('stdin with no newline for 300 KB: refused once, bounded, and the login still ends by its own rules', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--no-browser', '--wait', '2'], {
      env: emulator.env(makeConfigDir()),
      input: '\u0000'.repeat(300_000),
      timeoutMs: 15_000,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('not accepted: what was pasted is not a URL');
    expect(result.stderr).not.toMatch(/RangeError|^\s+at /m);
  });
});
