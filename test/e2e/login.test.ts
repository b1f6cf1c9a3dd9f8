import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHeadlessBrowser } from '../../src/demo/headless-browser.js';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';

const agent = (decision: 'allow' | 'deny') => ({
  login: 'demo',
  password: 'demo',
  decision,
  log: () => undefined,
  timeoutMs: 10_000,
});

describe('mmauth login (authorization code flow against the emulator)', () => {
  it('signs in through the user agent, sends state and PKCE S256, and stores the token', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--json', '--scope', 'service userinfo.email'], {
      env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }),
    });

    expect(summaryLines(result.stderr)).toEqual([]);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      token_type: 'bearer',
      scope: 'service userinfo.email',
      expires_in: 7200,
      grant: 'authorization_code',
      profile: 'default',
    });
    expect(json.access_token).toMatch(/^[\w-]{43}$/);

    const authorize = emulator.requests.find((r) => r.method === 'GET' && r.url.startsWith('/oauth2/authorize'));
    const query = new URL(authorize?.url ?? '', emulator.baseUrl).searchParams;
    expect(query.get('response_type')).toBe('code');
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(Buffer.from(query.get('state') ?? '', 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(query.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(query.has('client_secret')).toBe(false);

    const exchange = emulator.requests.find((r) => r.method === 'POST' && r.url === '/oauth2/token');
    const body = new URLSearchParams(exchange?.body);
    expect(body.get('grant_type')).toBe('authorization_code');
    expect(body.get('client_secret')).toBe(emulator.client.clientSecret);
    expect(body.get('redirect_uri')).toBe(query.get('redirect_uri'));
    expect(body.get('code_verifier')).toMatch(/^[\w-]{43,128}$/);

    expect(readConfig(configDir)).toMatchObject({
      profiles: {
        default: {
          base_url: emulator.baseUrl,
          client_id: 'mmauth-demo',
          client_secret: emulator.client.clientSecret,
          scope: 'service userinfo.email',
          token: {
            access_token: json.access_token,
            token_type: 'bearer',
            grant: 'authorization_code',
            scope: 'service userinfo.email',
          },
        },
      },
    });
  });

  it('keeps the config file 0600 in a 0700 directory', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login'], { env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) });
    expect(result.code).toBe(0);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
  });

  it('reports a denial with exit 4, shows the error page, and stores nothing', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], { env: emulator.env(configDir) });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    const page = await runHeadlessBrowser(url, agent('deny'));
    const result = await login.done;

    expect(page.body).toContain('data-result="error"');
    expect(page.body).toContain('access_denied');
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('access_denied');
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('refuses a callback with a wrong or missing state without exchanging its code, then accepts the real one', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], { env: emulator.env(configDir) });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';

    const forged = await fetch(`${redirectUri}?code=forged&state=wrong`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('unexpected &#34;state&#34;');
    const stateless = await fetch(`${redirectUri}?code=forged`);
    expect(stateless.status).toBe(400);
    expect(emulator.requests.some((r) => r.url === '/oauth2/token')).toBe(false);

    const page = await runHeadlessBrowser(url, agent('allow'));
    const result = await login.done;
    expect(page.body).toContain('data-result="success"');
    expect(result.stderr).toMatch(/not accepted: callback rejected: .*state.*; still waiting for the redirect/);
    expect(result.code).toBe(0);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
  });

  it('gives up after --wait with exit 3; the hint fits what is known (the probe saw the sign-in page; without it, an error page may be the cause)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const started = Date.now();
    const result = await runCli(['login', '--no-browser', '--wait', '1'], { env: emulator.env(configDir) });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/no redirect arrived .* within 1 s/);
    expect(result.stderr).toContain('the browser never came back to the redirect URI');
    const unprobed = await runCli(['login', '--no-browser', '--no-probe', '--wait', '1'], {
      env: emulator.env(configDir),
    });
    expect(unprobed.stderr).toContain('may have shown an error page');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('exits 4 and stores nothing when the client secret is wrong', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login'], {
      env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CLIENT_SECRET: 'wrong-secret' }),
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('invalid_client');
    expect(result.stderr).not.toContain('wrong-secret');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('a confidential client without a secret: tried as a public client, refused with invalid_client; exit 4 naming the ways to give the secret, never a prompt', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login'], {
      env: emulator.env(configDir, { MMAUTH_CLIENT_SECRET: undefined, BROWSER: HEADLESS_BROWSER }),
      timeoutMs: 10_000,
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('No client secret given: signing in as a public client (PKCE alone)');
    expect(result.stderr).toContain('the server knows this client as confidential, and no client secret was given');
    expect(result.stderr).not.toContain('.:');
    expect(result.stderr).toContain('MMAUTH_CLIENT_SECRET');
    expect(result.stderr).toContain('--client-secret-file');
    expect(result.stderr).not.toMatch(/\?\s*Client secret/);
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('listens on a fixed --redirect-uri port and remembers it in the profile', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const probe = await import('node:net').then(
      ({ createServer }) =>
        new Promise<number>((resolve) => {
          const server = createServer().listen(0, '127.0.0.1', () => {
            const port = (server.address() as { port: number }).port;
            server.close(() => resolve(port));
          });
        }),
    );
    const redirectUri = `http://127.0.0.1:${probe}/callback`;
    const result = await runCli(['login', '--redirect-uri', redirectUri], {
      env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(encodeURIComponent(redirectUri));
    expect(readConfig(configDir)).toMatchObject({ profiles: { default: { redirect_uri: redirectUri } } });
  });

  it.each([
    [
      'https://127.0.0.1:1/callback',
      /must be http, got https:\/\/127\.0\.0\.1:1\/callback: the loopback redirect never leaves this machine/,
    ],
    ['http://example.com:8976/callback', /must be http:\/\/127\.0\.0\.1/],
    ['http://127.0.0.1/callback', /explicit port/],
  ])('refuses --redirect-uri %s with exit 2', async (redirectUri, message) => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--redirect-uri', redirectUri], { env: emulator.env(makeConfigDir()) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('names --redirect-uri when the fixed port is in use', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--redirect-uri', `http://127.0.0.1:${emulator.port}/callback`], {
      env: emulator.env(makeConfigDir()),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/port \d+ on 127\.0\.0\.1 is in use/);
    expect(result.stderr).toContain('--redirect-uri');
  });

  it('exits 130 on Ctrl-C while waiting and closes the listener', async () => {
    const emulator = await startTestEmulator();
    const login = startCli(['login', '--no-browser', '--wait', '30'], { env: emulator.env(makeConfigDir()) });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    await login.waitForStderr(/Waiting for the redirect/);
    login.child.kill('SIGINT');
    const result = await login.done;
    expect(result.code).toBe(130);
    const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';
    await expect(fetch(redirectUri)).rejects.toThrow();
  });
});
