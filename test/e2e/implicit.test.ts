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
const AUTHORIZE_URL = /http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/;

describe('mmauth login --implicit (token in the fragment, relayed by the listener page)', () => {
  it('signs in without a client secret, warns that the flow is deprecated, and stores an implicit token', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--implicit', '--json', '--scope', 'service userinfo.email'], {
      env: emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CLIENT_SECRET: undefined }),
    });

    expect(summaryLines(result.stderr)).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('deprecated (RFC 9700 §2.1.2');
    const json = JSON.parse(result.stdout);
    // The emulator, like Doorkeeper, sends no scope in the fragment: the requested one was granted.
    expect(json).toMatchObject({
      token_type: 'bearer',
      scope: 'service userinfo.email',
      expires_in: 7200,
      grant: 'implicit',
    });

    const authorize = emulator.requests.find((r) => r.method === 'GET' && r.url.startsWith('/oauth2/authorize'));
    const query = new URL(authorize?.url ?? '', emulator.baseUrl).searchParams;
    expect(query.get('response_type')).toBe('token');
    expect(query.has('client_secret')).toBe(false);
    expect(Buffer.from(query.get('state') ?? '', 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(emulator.requests.some((r) => r.url === '/oauth2/token')).toBe(false);

    const config = readConfig(configDir) as { profiles: { default: Record<string, unknown> } };
    expect(config.profiles.default).toMatchObject({
      client_id: 'mmauth-demo',
      token: { access_token: json.access_token, grant: 'implicit' },
    });
    expect(config.profiles.default).not.toHaveProperty('client_secret');

    const info = await runCli(['info', '--json'], { env: emulator.env(configDir) });
    expect(info.code).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ resource_owner_id: 42, scope: ['service', 'userinfo.email'] });
  });

  it('serves a relay page whose CSP allows exactly its own script and its own origin', async () => {
    const emulator = await startTestEmulator();
    const login = startCli(['login', '--implicit', '--no-browser', '--wait', '15'], {
      env: emulator.env(makeConfigDir()),
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';

    const page = await fetch(redirectUri);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/]{43}='/);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('data-relay="fragment"');
    expect(html).toContain('location.hash');

    // A POST from another origin (a web page the user happens to visit) is refused.
    const foreign = await fetch(redirectUri, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'access_token=x&state=y',
    });
    expect(foreign.status).toBe(403);
    const noOrigin = await fetch(redirectUri, { method: 'POST', body: 'access_token=x&state=y' });
    expect(noOrigin.status).toBe(403);
    login.child.kill('SIGINT');
    expect((await login.done).code).toBe(130);
  });

  it('reports a denial that arrives in the fragment with exit 4 and stores nothing', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--implicit', '--no-browser', '--wait', '15'], { env: emulator.env(configDir) });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const page = await runHeadlessBrowser(url, agent('deny'));
    const result = await login.done;

    expect(page.finalUrl).toMatch(/#error=access_denied&/);
    expect(JSON.parse(page.body)).toMatchObject({ result: 'error' });
    expect(page.body).toContain('access_denied');
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('access_denied');
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('refuses a relayed fragment with a wrong or missing state, keeps waiting, then accepts the real one', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--implicit', '--no-browser', '--wait', '15'], { env: emulator.env(configDir) });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';
    const origin = new URL(redirectUri).origin;
    const relay = (fragment: string) =>
      fetch(redirectUri, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: fragment,
      });

    const forged = await relay('access_token=forged-token-0123456789&token_type=Bearer&state=wrong');
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({
      result: 'error',
      detail: expect.stringContaining('unexpected "state"'),
    });
    const stateless = await relay('access_token=forged-token-0123456789&token_type=Bearer');
    expect(stateless.status).toBe(400);

    const page = await runHeadlessBrowser(url, agent('allow'));
    const result = await login.done;
    expect(JSON.parse(page.body)).toMatchObject({ result: 'success', title: 'Signed in' });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/not accepted: callback rejected: unexpected "state" value; still waiting/);
    const config = readConfig(configDir) as { profiles: { default: { token: { access_token: string } } } };
    expect(config.profiles.default.token.access_token).not.toBe('forged-token-0123456789');
  });

  it('refuses --implicit together with a client secret source, before any request', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['login', '--implicit', '--client-secret-stdin'], {
      env: emulator.env(makeConfigDir()),
      input: 'secret\n',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('uses no client secret');
    expect(emulator.requests).toHaveLength(0);
  });
});
