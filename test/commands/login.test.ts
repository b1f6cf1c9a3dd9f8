import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runLogin, type LoginOptions } from '../../src/commands/login/login.js';
import {
  createTestContext,
  followAuthorizeRedirect,
  throughStartAddress,
  type BrowserStandIn,
} from '../support/context.js';
import { readConfig, startTestEmulator, type TestEmulator } from '../support/emulator.js';
import { failureOf, rejectedBy } from '../support/failure.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const STATE = 'state-0123456789abcdefghijklmnopqrstuvwxyzABC';
const VERIFIER = 'verifier-0123456789abcdefghijklmnopqrstuvwxyzABCDEF';
const options: LoginOptions = { timeout: 5, wait: 5, browser: true, verify: true, probe: true };

function contextFor(emulator: TestEmulator, browser: BrowserStandIn, env: Record<string, string> = {}) {
  return createTestContext({
    nowMs: NOW,
    browser,
    random: { state: STATE, codeVerifier: VERIFIER },
    env: {
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      ...env,
    },
  });
}

describe('runLogin (in-process: the real emulator and listener, a browser stand-in, fixed randomness)', () => {
  it('code flow: the authorization request carries the injected state and its S256 challenge; the token is stored', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const visits: string[] = [];
    const ctx = contextFor(emulator, followAuthorizeRedirect(visits));
    await runLogin({ ...options, json: true, scope: 'service userinfo.email' }, ctx);

    const authorize = new URL(visits[0] ?? '');
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'mmauth-demo',
      redirect_uri: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/),
      scope: 'service userinfo.email',
      state: STATE,
      code_challenge: createHash('sha256').update(VERIFIER).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const exchange = new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/token')?.body);
    expect(exchange.get('code_verifier')).toBe(VERIFIER);
    expect(exchange.get('redirect_uri')).toBe(authorize.searchParams.get('redirect_uri'));
    const json = JSON.parse(ctx.stdout.text());
    expect(json).toMatchObject({
      expires_at: '2026-11-23T14:00:00Z',
      grant: 'authorization_code',
      scope: 'service userinfo.email',
    });
    expect(readConfig(ctx.configDir)).toMatchObject({
      profiles: { default: { token: { access_token: json.access_token } } },
    });
    expect(ctx.stderr.text()).toContain('Opened it with the test browser.');
  });

  it('implicit flow: the relayed fragment with the injected state gives the token, no secret sent', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const ctx = contextFor(emulator, followAuthorizeRedirect());
    await runLogin({ ...options, implicit: true, json: true }, ctx);
    expect(JSON.parse(ctx.stdout.text())).toMatchObject({ grant: 'implicit', expires_in: 7200 });
    expect(emulator.requests.some((r) => r.url === '/oauth2/token')).toBe(false);
  });

  it('a redirect with another state is refused (400) and waiting goes on; the genuine one then wins', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    let forgedStatus: Promise<number> | undefined;
    const browser: BrowserStandIn = async (opened) => {
      // As a real browser, opening returns at once; the forged redirect arrives first (in the same
      // browser: it carries the login cookie, so only `state` can refuse it), the genuine one after its answer.
      const { url, cookie } = await throughStartAddress(opened);
      const redirectUri = new URL(url).searchParams.get('redirect_uri') ?? '';
      const headers = cookie === undefined ? {} : { cookie };
      forgedStatus = fetch(`${redirectUri}?code=forged&state=not-ours`, { headers }).then((r) => r.status);
      void forgedStatus.then(async () => {
        const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
        await fetch(location, { headers });
      });
      return { isOpened: true, via: 'the test browser' };
    };
    const ctx = contextFor(emulator, browser);
    await runLogin(options, ctx);
    expect(ctx.stderr.text()).toContain(
      'not accepted: callback rejected: unexpected "state" value; still waiting for the redirect',
    );
    expect(await forgedStatus).toBe(400);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
  });

  it('a wrong client secret: the exchange fails, the page says so, token_endpoint_error exit 4, nothing stored', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    let page: Promise<string> | undefined;
    const browser: BrowserStandIn = async (opened) => {
      const { url, cookie } = await throughStartAddress(opened);
      const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
      page = fetch(location, { headers: cookie === undefined ? {} : { cookie } }).then((r) => r.text());
      return { isOpened: true, via: 'the test browser' };
    };
    const ctx = contextFor(emulator, browser, { MMAUTH_CLIENT_SECRET: 'wrong-secret' });
    const error = await rejectedBy(() => runLogin(options, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'token_endpoint_error', exitCode: 4 });
    expect(error.oauthError).toBe('invalid_client');
    expect(await page).toContain('data-result="error"');
    expect((await ctx.store()).list()).toEqual([]);
  });

  it('the system opener only asks: login says "asked the system browser", never that a browser opened', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const follow = followAuthorizeRedirect();
    const ctx = contextFor(emulator, async (url) => {
      await follow(url);
      return { isOpened: true, via: 'the system browser' };
    });
    await runLogin(options, ctx);
    expect(ctx.stderr.text()).toContain('Asked the system browser to open it.');
    expect(ctx.stderr.text()).not.toContain('Opened it with the system browser');
  });

  it('--wait bounds the waiting only: an exchange still under way when it passes finishes, and its token is kept (A14)', async () => {
    const { startHostileServer } = await import('../support/hostile-server.js');
    const server = await startHostileServer({
      'GET /oauth2/authorize': (req, res) => {
        const query = new URL(req.url ?? '/', 'http://x').searchParams;
        const location = `${query.get('redirect_uri')}?code=c-1&state=${query.get('state')}`;
        res.writeHead(302, { location }).end();
      },
      'POST /oauth2/token': (_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ access_token: 'slow-token-0123456789abcdef', token_type: 'Bearer', expires_in: 3600 }),
          );
        }, 1_500);
      },
    });
    const ctx = createTestContext({
      nowMs: NOW,
      browser: followAuthorizeRedirect(),
      env: { MMAUTH_BASE_URL: server.baseUrl, MMAUTH_CLIENT_ID: 'app', MMAUTH_CLIENT_SECRET: 'secret-0123456789' },
    });
    await runLogin({ ...options, wait: 1 }, ctx);
    expect((await (await ctx.store()).read('default'))?.token?.accessToken).toBe('slow-token-0123456789abcdef');
  });

  it('no redirect within --wait: callback_timeout (exit 3)', async () => {
    const emulator = await startTestEmulator();
    const ctx = contextFor(emulator, async () => ({ isOpened: false, reason: 'nobody is there' }));
    const error = await rejectedBy(() => runLogin({ ...options, wait: 1 }, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'callback_timeout', exitCode: 3 });
    expect(ctx.stderr.text()).toContain('Not opening a browser: nobody is there.');
  });
});

describe('the secret prompt after a public attempt is refused (issue 30: an invalid_grant once seen on the retry)', () => {
  it.each(['spec', 'doorkeeper5'] as const)(
    '15 logins in a row, the secret typed after 0–300 ms: every retried exchange succeeds with the same code (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      for (let i = 0; i < 15; i++) {
        const ctx = createTestContext({
          nowMs: NOW,
          browser: followAuthorizeRedirect(),
          env: { MMAUTH_BASE_URL: emulator.baseUrl, MMAUTH_CLIENT_ID: emulator.client.clientId },
        });
        ctx.prompter = {
          ...ctx.prompter,
          canPrompt: true,
          secret: async () => {
            await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 300)));
            return emulator.client.clientSecret;
          },
        };
        const before = emulator.requests.length;
        await runLogin({ ...options, json: true, scope: 'service' }, ctx);
        const exchanges = emulator.requests.slice(before).filter((r) => r.url === '/oauth2/token');
        expect(exchanges.map((r) => new URLSearchParams(r.body).has('client_secret'))).toEqual([false, true]);
        const codes = new Set(exchanges.map((r) => new URLSearchParams(r.body).get('code')));
        expect(codes.size).toBe(1);
      }
    },
    60_000,
  );
});
