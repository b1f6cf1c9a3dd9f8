/**
 * mmauth (the spawned binary) against panva's oidc-provider 8.8.1, an OpenID Certified
 * authorization server nobody here wrote, started in-process on 127.0.0.1.
 *
 * What oidc-provider lacks compared with the service: no plain OAuth 2.0 implicit flow (its
 * configuration refuses a bare `response_type=token`; only OpenID's `id_token token` exists, off
 * by default per RFC 9700 §2.1.2), and no Doorkeeper token info endpoint (`/oauth2/token/info` is a 404 there). So
 * `login --implicit`, `login --with-token` and `info` are not run here (the emulator and Chromium
 * suites cover them), and `revoke` cannot confirm through token info: it warns, and this test
 * confirms the revocation through oidc-provider's RFC 7662 introspection instead.
 *
 * Each protection is proven from what the server received: PKCE (the challenge is the S256 of the
 * verifier), state (a genuine code under a forged state never reaches the token endpoint), the
 * client secret (only in the token and revoke request bodies), iss (RFC 9207).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runHeadlessBrowser } from '../../src/demo/headless-browser.js';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli, summaryLines } from '../support/cli.js';
import { readConfig, readConfigText, storedAccessToken as storedToken } from '../support/emulator.js';
import { PUBLIC_CLIENT_ID, startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { openChromiumPage } from '../support/chromium-page.js';

/** A user agent that signs in but stops before the loopback redirect, so the test holds the callback URL. */
const remoteAgent = {
  login: 'demo',
  password: 'demo',
  decision: 'allow' as const,
  log: () => undefined,
  timeoutMs: 10_000,
  isRedirectUnreachable: true,
};

/**
 * Starts `mmauth login --no-browser` against a fresh provider and signs in with an agent that
 * stops before the loopback redirect: the test holds the genuine callback URL, mmauth still waits.
 */
async function signInWithoutRedirect() {
  const provider = await startTestProvider();
  const login = startCli(['login', '--no-browser', '--wait', '15'], { env: envFor(provider, makeConfigDir()) });
  const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
  const genuine = new URL((await runHeadlessBrowser(url, { ...remoteAgent })).finalUrl);
  return { provider, login, genuine };
}

function envFor(provider: TestProvider, configDir: string, extra: Record<string, string | undefined> = {}) {
  return {
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_BASE_URL: provider.baseUrl,
    MMAUTH_CLIENT_ID: provider.clientId,
    MMAUTH_CLIENT_SECRET: provider.clientSecret,
    ...extra,
  };
}

describe('interop with oidc-provider (OpenID Certified)', () => {
  it("login: authorization code flow with PKCE S256, state and iss from the server's metadata; the token is active", async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--json'], {
      env: envFor(provider, configDir, { BROWSER: HEADLESS_BROWSER }),
    });
    expect(summaryLines(result.stderr)).toEqual([]);
    expect(result.code).toBe(0);
    const token = storedToken(configDir);
    expect(JSON.parse(result.stdout).access_token).toBe(token);
    expect(await provider.isActive(token)).toBe(true);

    const authorize = provider.requests.find((r) => r.url.startsWith('/oauth2/authorize?'));
    const query = new URL(authorize?.url ?? '', provider.baseUrl).searchParams;
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('state')?.length).toBeGreaterThanOrEqual(22);
    const exchange = new URLSearchParams(provider.requests.find((r) => r.url === '/oauth2/token')?.body);
    expect(exchange.get('code_verifier')).toMatch(/^[\w-]{43,128}$/);
    // RFC 7636 §4.6: the challenge the server got is BASE64URL(SHA256(the verifier it got later)).
    expect(
      createHash('sha256')
        .update(exchange.get('code_verifier') ?? '')
        .digest('base64url'),
    ).toBe(query.get('code_challenge'));
    expect(exchange.get('redirect_uri')).toBe(query.get('redirect_uri'));
    // Its metadata (OpenID Connect Discovery; RFC 8414's path answers 404 here) was read and kept, iss
    // promised: the login above passed RFC 9207's check with the iss oidc-provider sent.
    const metadata = (readConfig(configDir) as { profiles: Record<string, any> }).profiles.default.server_metadata;
    expect(metadata.document).toMatchObject({
      issuer: provider.baseUrl,
      source: 'openid-configuration',
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('state is checked: a callback carrying a genuine code but another state is refused and its code never exchanged', async () => {
    const { provider, login, genuine } = await signInWithoutRedirect();
    expect(genuine.searchParams.get('code')).toBeTruthy();

    const forged = new URL(genuine);
    forged.searchParams.set('state', 'an-attacker-chosen-state');
    expect((await fetch(forged)).status).toBe(400);
    const missing = new URL(genuine);
    missing.searchParams.delete('state');
    expect((await fetch(missing)).status).toBe(400);
    expect(provider.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);

    expect((await fetch(genuine)).status).toBe(200);
    expect((await login.done).code).toBe(0);
    expect(provider.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
  });

  it('iss (RFC 9207): the metadata of oidc-provider promises it, mmauth reads that metadata; a callback naming another issuer ends the login (iss_mismatch, exit 4), nothing exchanged', async () => {
    const { provider, login, genuine } = await signInWithoutRedirect();
    expect(genuine.searchParams.get('iss')).toBe(provider.baseUrl);

    const foreign = new URL(genuine);
    foreign.searchParams.set('iss', 'https://evil.example');
    // The browser is told the sign-in failed, and why; the login ends.
    const page = await (await fetch(foreign)).text();
    expect(page).toContain('Sign-in failed');
    expect(page).toContain('iss');
    const result = await login.done;
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(
      /error: callback rejected: "iss" names another server, expected http:\/\/127\.0\.0\.1:\d+ \(RFC 9207\)/,
    );
    expect(provider.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);
    expect(provider.requests.some((r) => r.url.startsWith('/.well-known/'))).toBe(true);
  });

  it('login: a denial (Cancel on the sign-in page) exits 4 with access_denied and stores nothing', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], { env: envFor(provider, configDir) });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    const page = await runHeadlessBrowser(url, {
      login: 'demo',
      password: 'demo',
      decision: 'deny',
      log: () => undefined,
      timeoutMs: 10_000,
    });
    const result = await login.done;
    expect(page.body).toContain('data-result="error"');
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('access_denied');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('client-credentials: a token the server reports active', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--json'], { env: envFor(provider, configDir) });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ token_type: 'bearer', scope: 'service', grant: 'client_credentials' });
    expect(await provider.isActive(json.access_token)).toBe(true);
  });

  it('revoke: the token is dead afterwards (introspection), and the stored token is forgotten', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const env = envFor(provider, configDir);
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const token = storedToken(configDir);
    expect(await provider.isActive(token)).toBe(true);

    const result = await runCli(['revoke'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('not confirmed: the server has no token info endpoint');
    expect(await provider.isActive(token)).toBe(false);
    expect(readConfig(configDir)).toMatchObject({ profiles: { default: { client_id: provider.clientId } } });
    expect((readConfig(configDir) as { profiles: { default: object } }).profiles.default).not.toHaveProperty('token');
  });

  it('a wrong client secret exits 4 with invalid_client and stores nothing', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials'], {
      env: envFor(provider, configDir, { MMAUTH_CLIENT_SECRET: 'wrong' }),
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('invalid_client');
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('the client secret travels only in the token and revoke request bodies', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const env = envFor(provider, configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    expect((await runCli(['revoke'], { env })).code).toBe(0);
    const carriers = provider.requests
      .filter((r) => `${r.url} ${r.body}`.includes(provider.clientSecret))
      .map((r) => `${r.method} ${r.url}`);
    // The access token's revocation, then its refresh token's: both to the revoke endpoint.
    expect(carriers).toEqual(['POST /oauth2/token', 'POST /oauth2/revoke', 'POST /oauth2/revoke']);
  });

  it('a public client (token_endpoint_auth_method none): login on PKCE and client_id alone, then revoke with client_id alone', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const env = envFor(provider, configDir, {
      MMAUTH_CLIENT_ID: PUBLIC_CLIENT_ID,
      MMAUTH_CLIENT_SECRET: undefined,
      BROWSER: HEADLESS_BROWSER,
    });
    const login = await runCli(['login'], { env });
    expect(login.code, login.stderr).toBe(0);
    const exchange = new URLSearchParams(provider.requests.find((r) => r.url === '/oauth2/token')?.body);
    expect(exchange.get('client_id')).toBe(PUBLIC_CLIENT_ID);
    expect(exchange.has('client_secret')).toBe(false);
    const token = storedToken(configDir);
    expect(await provider.provider.AccessToken.find(token)).toBeDefined();

    const revoke = await runCli(['revoke'], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    const revocation = new URLSearchParams(provider.requests.find((r) => r.url === '/oauth2/revoke')?.body);
    expect(Object.fromEntries(revocation)).toMatchObject({ token, client_id: PUBLIC_CLIENT_ID });
    expect(revocation.has('client_secret')).toBe(false);
    expect(await provider.provider.AccessToken.find(token)).toBeUndefined();
  });

  it('renewal against immediate rotation: a stale token renews with its refresh token; the old refresh token is then refused', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const env = envFor(provider, configDir, { BROWSER: HEADLESS_BROWSER });
    expect((await runCli(['login'], { env })).code).toBe(0);
    const before = (readConfig(configDir) as { profiles: { default: { token: Record<string, string> } } }).profiles
      .default.token;
    expect(before.refresh_token).toBeDefined();
    // As if the token's lifetime had passed: stale by the client's clock.
    const config = readConfig(configDir) as { profiles: { default: { token: Record<string, string> } } };
    config.profiles.default.token.obtained_at = new Date(Date.now() - 7_200_000).toISOString();
    config.profiles.default.token.expires_at = new Date(Date.now() - 3_600_000).toISOString();
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });

    const token = await runCli(['token'], { env });
    expect(token.code, token.stderr).toBe(0);
    const renewed = token.stdout.trim();
    expect(renewed).not.toBe(before.access_token);
    expect(await provider.isActive(renewed)).toBe(true);
    const after = (readConfig(configDir) as { profiles: { default: { token: Record<string, string> } } }).profiles
      .default.token;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    const reuse = await fetch(`${provider.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: before.refresh_token ?? '',
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
      }),
    });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it.each([
    ['refresh', 'refresh'],
    ['refresh', 'refresh', 're-login'],
  ])(
    'the grant ends when mmauth says: login, %s, %s…, logout leave no refresh token the provider honours',
    async (...steps) => {
      const provider = await startTestProvider();
      const configDir = makeConfigDir();
      const env = envFor(provider, configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
      expect((await runCli(['login'], { env })).code).toBe(0);
      const held: string[] = [];
      const remember = () => {
        const token = (readConfig(configDir) as { profiles: { default: { token?: Record<string, string> } } }).profiles
          .default.token;
        if (token?.refresh_token !== undefined) held.push(token.refresh_token);
      };
      remember();
      for (const step of steps) {
        const result = await runCli(step === 're-login' ? ['login'] : ['refresh'], { env });
        expect(result.code, result.stderr).toBe(0);
        remember();
      }
      const logout = await runCli(['logout', '--json'], { env });
      expect(logout.code, logout.stderr).toBe(0);
      for (const refreshToken of held) {
        const reuse = await fetch(`${provider.baseUrl}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            client_id: provider.clientId,
            client_secret: provider.clientSecret,
          }),
        });
        expect(reuse.status).toBe(400);
      }
    },
    30_000,
  );
});

describe('device login against oidc-provider (OpenID Certified)', () => {
  it('login --device by its metadata: Chromium types the code, signs in and consents; the token is active, renews, and logout ends it', async () => {
    const provider = await startTestProvider();
    const configDir = makeConfigDir();
    const env = envFor(provider, configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    const login = startCli(['login', '--device', '--json'], { env, timeoutMs: 90_000 });
    const [, uri, code] = await login.waitForStderr(/Open (\S+) on any device and enter the code:\s+(\S+)/, 20_000);
    const page = await openChromiumPage();
    await page.goto(uri ?? '');
    await page.fill('input[name="user_code"]', code ?? '');
    await page.click('button[type="submit"]');
    // oidc-provider's development pages: confirm the code, sign in (any login), consent.
    // The page's text once it has settled: a read during a navigation is tried again (bounded: 10 s).
    const settled = async (): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        try {
          await page.waitForLoadState('load');
          return await page.content();
        } catch (error) {
          if (attempt >= 100) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    for (let step = 0; step < 6 && !(await settled()).includes('Sign-in Success'); step++) {
      if (await page.locator('input[name="login"]').count()) {
        await page.fill('input[name="login"]', 'demo');
        await page.fill('input[name="password"]', 'demo');
      }
      await page.click('button[type="submit"]');
      await page.waitForLoadState('load');
    }
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout) as Record<string, any>;
    expect(document).toMatchObject({ flow: 'device', grant: 'authorization_code' });
    expect(await provider.isActive(document.access_token as string)).toBe(true);
    const refreshed = await runCli(['refresh', '--json'], { env });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const renewed = (JSON.parse(refreshed.stdout) as Record<string, any>).access_token as string;
    expect(await provider.isActive(renewed)).toBe(true);
    expect((await runCli(['logout'], { env })).code).toBe(0);
    expect(await provider.isActive(renewed)).toBe(false);
  }, 120_000);
});
