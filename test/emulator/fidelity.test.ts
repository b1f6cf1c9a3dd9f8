/**
 * The emulator against ../shared/spec/server-behaviour.md, row by row, over real HTTP on 127.0.0.1.
 * Where the spec speaks the spec wins (default flavor); `flavor: 'doorkeeper5'` gives Doorkeeper's
 * token info fields and revoke refusals. Not covered: "another client's code" (the emulator seeds a
 * single confidential client) and "a live token may skip the consent page" (never done).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../support/emulator.js';

/** A JSON body, loosely typed: these tests assert on its shape. */
type Json = Record<string, any>;
async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json;
}

const REDIRECT = 'http://127.0.0.1:51234/callback';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

function authorizeUrl(emulator: TestEmulator, params: Record<string, string | undefined> = {}): string {
  const url = new URL('/oauth2/authorize', emulator.baseUrl);
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: emulator.client.clientId,
    redirect_uri: REDIRECT,
    scope: 'service',
    state: 'xyz',
    ...params,
  };
  for (const [key, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(key, value);
  return url.href;
}

async function authorize(emulator: TestEmulator, params: Record<string, string | undefined> = {}): Promise<Response> {
  return fetch(authorizeUrl(emulator, params), { redirect: 'manual' });
}

/** An authorization code from an auto-approving emulator. */
async function obtainCode(emulator: TestEmulator, params: Record<string, string | undefined> = {}): Promise<string> {
  const response = await authorize(emulator, params);
  const location = new URL(response.headers.get('location') ?? '');
  return location.searchParams.get('code') ?? '';
}

/** The value of a hidden field on a page (entities decoded as the emulator writes them). */
function field(html: string, name: string): string {
  return (new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '').replace(/&#38;/g, '&');
}

/** Opens the authorization URL without a session and submits the sign-in form; returns the cookie and the answer. */
async function signIn(
  emulator: TestEmulator,
  params: Record<string, string | undefined>,
  password = 'demo',
): Promise<{ cookie: string; response: Response }> {
  const first = await authorize(emulator, params);
  const cookie = first.headers.get('set-cookie')?.split(';')[0] ?? '';
  const page = await first.text();
  const response = await fetch(`${emulator.baseUrl}/oauth2/sign_in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      authenticity_token: field(page, 'authenticity_token'),
      return_to: field(page, 'return_to'),
      login: 'demo',
      password,
    }),
  });
  return { cookie, response };
}

function tokenRequest(
  emulator: TestEmulator,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${emulator.baseUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
}

function codeExchange(
  emulator: TestEmulator,
  code: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: emulator.client.clientId,
    client_secret: emulator.client.clientSecret,
    ...extra,
  };
}

describe('authorization endpoint GET /oauth2/authorize', () => {
  it('row 1: a valid request without a session answers 200 with a sign-in page, then a consent page with two forms, each with its own CSRF token', async () => {
    const emulator = await startTestEmulator();
    const first = await authorize(emulator);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('name="password"');
    const { cookie, response: signedIn } = await signIn(emulator, {});
    expect(signedIn.status).toBe(302);
    const consent = await (
      await fetch(new URL(signedIn.headers.get('location') ?? '', emulator.baseUrl), { headers: { cookie } })
    ).text();
    const tokens = [...consent.matchAll(/name="authenticity_token" value="([^"]+)"/g)].map((m) => m[1]);
    expect(consent).toContain('id="allow"');
    expect(consent).toContain('id="deny"');
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
  });

  it('row 1: a wrong password shows the sign-in page again', async () => {
    const emulator = await startTestEmulator();
    const { response } = await signIn(emulator, {}, 'wrong');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Invalid login or password.');
  });

  it('row 2: approval redirects 302 with code and state; a redirect URI query of its own is kept', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const response = await authorize(emulator);
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('state')).toBe('xyz');
  });

  it.each([
    ['unknown client', { client_id: 'nobody' }, 'invalid_client'],
    ['missing redirect_uri', { redirect_uri: undefined }, 'invalid_redirect_uri'],
    ['non-matching redirect_uri (path)', { redirect_uri: 'http://127.0.0.1:1/other' }, 'invalid_redirect_uri'],
    ['a trailing slash', { redirect_uri: 'http://127.0.0.1:1/callback/' }, 'invalid_redirect_uri'],
    ['localhost instead of 127.0.0.1', { redirect_uri: 'http://localhost:1/callback' }, 'invalid_redirect_uri'],
    ['invalid scope', { scope: 'admin' }, 'invalid_scope'],
    ['commas in scope', { scope: 'service,userinfo.email' }, 'invalid_scope'],
    ['missing response_type', { response_type: undefined }, 'invalid_request'],
    ['the misspelling respsonse_type', { response_type: undefined, respsonse_type: 'code' }, 'invalid_request'],
    ['unsupported response type', { response_type: 'id_token' }, 'unsupported_response_type'],
    [
      'a bad PKCE method',
      { code_challenge: CHALLENGE, code_challenge_method: 'S512' },
      'invalid_code_challenge_method',
    ],
    ['a challenge without a method', { code_challenge: CHALLENGE }, 'invalid_code_challenge_method'],
  ])('row 4: %s is an HTTP 200 HTML error page, never a redirect', async (_name, params, error) => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const response = await authorize(emulator, params);
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(await response.text()).toContain(`data-error="${error}"`);
  });

  it('row 5: any port is accepted for the 127.0.0.1 literal', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    for (const port of [1, 8976, 65535]) {
      const response = await authorize(emulator, { redirect_uri: `http://127.0.0.1:${port}/callback` });
      expect(response.status).toBe(302);
    }
  });

  it('row 6: implicit approval puts access_token, token_type, expires_in and state in the fragment, with no scope', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const response = await authorize(emulator, { response_type: 'token' });
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.search).toBe('');
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(Object.fromEntries(fragment)).toEqual({
      access_token: expect.stringMatching(/^[\w-]{43}$/),
      token_type: 'Bearer',
      expires_in: '7200',
      state: 'xyz',
    });
  });

  it('row 6: implicit approval with no expiry sends no expires_in', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, tokenTtlS: 0 });
    const fragment = new URLSearchParams(
      new URL((await authorize(emulator, { response_type: 'token' })).headers.get('location') ?? '').hash.slice(1),
    );
    expect(fragment.has('expires_in')).toBe(false);
  });

  it('row 7: `scopes` is ignored and the default scope applies', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const code = await obtainCode(emulator, { scope: undefined, scopes: 'userinfo.email' });
    const token = await json(await tokenRequest(emulator, codeExchange(emulator, code)));
    expect(token.scope).toBe('service');
  });
});

describe('authorization endpoint: denial (row 3)', () => {
  it.each([
    ['code', 'search'],
    ['token', 'hash'],
  ] as const)(
    'response_type=%s: 302 with access_denied, the description with + for spaces, and state, in the %s',
    async (responseType, part) => {
      const emulator = await startTestEmulator();
      const { cookie } = await signIn(emulator, { response_type: responseType });
      const consent = await (
        await fetch(authorizeUrl(emulator, { response_type: responseType }), { headers: { cookie } })
      ).text();
      const denyForm = /<form[^>]*id="deny-form"[^>]*>([\s\S]*?)<\/form>/.exec(consent)?.[1] ?? '';
      const fields = new URLSearchParams(
        [...denyForm.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m): [string, string] => [
          m[1] ?? '',
          (m[2] ?? '').replace(/&#38;/g, '&'),
        ]),
      );
      const response = await fetch(`${emulator.baseUrl}/oauth2/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: fields,
      });
      expect(response.status).toBe(302);
      const location = response.headers.get('location') ?? '';
      const raw = part === 'search' ? new URL(location).search.slice(1) : new URL(location).hash.slice(1);
      expect(raw).toContain('error_description=The+resource+owner+or+authorization+server+denied+the+request.');
      const params = new URLSearchParams(raw);
      expect(params.get('error')).toBe('access_denied');
      expect(params.get('state')).toBe('xyz');
      expect(params.has('code')).toBe(false);
    },
  );
});

describe('token endpoint POST /oauth2/token', () => {
  it('row 1: success is 200 with Cache-Control no-store and the token fields; every request mints a new token', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const response = await tokenRequest(emulator, codeExchange(emulator, await obtainCode(emulator)));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 7200,
      scope: 'service',
      created_at: expect.any(Number),
      // Refresh tokens are on by default (Doorkeeper's use_refresh_token): the code flow gets one.
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    });
    const second = await json(await tokenRequest(emulator, codeExchange(emulator, await obtainCode(emulator))));
    expect(second.access_token).not.toBe(body.access_token);
    const info = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(info.status).toBe(200);
  });

  it('row 1: no expires_in for a token that never expires', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 0 });
    const body = await json(
      await tokenRequest(emulator, {
        grant_type: 'client_credentials',
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    );
    expect(body).not.toHaveProperty('expires_in');
  });

  it('row 2: HTTP Basic works, and wins over body parameters', async () => {
    const emulator = await startTestEmulator();
    const basic = (secret: string) =>
      `Basic ${Buffer.from(`${emulator.client.clientId}:${secret}`).toString('base64')}`;
    const params = { grant_type: 'client_credentials' };
    expect((await tokenRequest(emulator, params, { authorization: basic(emulator.client.clientSecret) })).status).toBe(
      200,
    );
    expect(
      (
        await tokenRequest(
          emulator,
          { ...params, client_id: emulator.client.clientId, client_secret: 'wrong' },
          { authorization: basic(emulator.client.clientSecret) },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await tokenRequest(
          emulator,
          { ...params, client_id: emulator.client.clientId, client_secret: emulator.client.clientSecret },
          { authorization: basic('wrong') },
        )
      ).status,
    ).toBe(401);
  });

  it('row 3: redirect_uri may differ only in the port of a loopback IP literal', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const code = await obtainCode(emulator);
    expect(
      (await tokenRequest(emulator, codeExchange(emulator, code, { redirect_uri: 'http://127.0.0.1:9/callback' })))
        .status,
    ).toBe(200);
  });

  type Case = [string, (e: TestEmulator) => Promise<Record<string, string>>, number, string];
  const cases: Case[] = [
    [
      'a wrong client secret',
      async (e) => codeExchange(e, await obtainCode(e), { client_secret: 'wrong' }),
      401,
      'invalid_client',
    ],
    [
      'a missing client secret',
      async (e) => ({ grant_type: 'client_credentials', client_id: e.client.clientId }),
      401,
      'invalid_client',
    ],
    [
      'an unknown client',
      async () => ({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' }),
      401,
      'invalid_client',
    ],
    ['an unknown code', async (e) => codeExchange(e, 'nonsense'), 400, 'invalid_grant'],
    [
      'a wrong redirect_uri',
      async (e) => codeExchange(e, await obtainCode(e), { redirect_uri: 'http://127.0.0.1:9/other' }),
      400,
      'invalid_grant',
    ],
    [
      'a wrong PKCE verifier',
      async (e) =>
        codeExchange(e, await obtainCode(e, { code_challenge: CHALLENGE, code_challenge_method: 'S256' }), {
          code_verifier: 'w'.repeat(43),
        }),
      400,
      'invalid_grant',
    ],
    [
      'a missing verifier after a challenge',
      async (e) => codeExchange(e, await obtainCode(e, { code_challenge: CHALLENGE, code_challenge_method: 'S256' })),
      400,
      'invalid_request',
    ],
    [
      'a missing code',
      async (e) => ({
        grant_type: 'authorization_code',
        redirect_uri: REDIRECT,
        client_id: e.client.clientId,
        client_secret: e.client.clientSecret,
      }),
      400,
      'invalid_request',
    ],
    [
      'a missing redirect_uri',
      async (e) => ({
        grant_type: 'authorization_code',
        code: await obtainCode(e),
        client_id: e.client.clientId,
        client_secret: e.client.clientSecret,
      }),
      400,
      'invalid_request',
    ],
    [
      'a missing grant_type',
      async (e) => ({ client_id: e.client.clientId, client_secret: e.client.clientSecret }),
      400,
      'invalid_request',
    ],
    [
      'grant_type password',
      async (e) => ({ grant_type: 'password', client_id: e.client.clientId, client_secret: e.client.clientSecret }),
      400,
      'unsupported_grant_type',
    ],
    [
      'an unknown scope',
      async (e) => ({
        grant_type: 'client_credentials',
        scope: 'admin',
        client_id: e.client.clientId,
        client_secret: e.client.clientSecret,
      }),
      400,
      'invalid_scope',
    ],
  ];
  it.each(cases)(
    'row 4: %s → %i %s, with Cache-Control no-store and WWW-Authenticate',
    async (_name, params, status, error) => {
      const emulator = await startTestEmulator({ autoApprove: true });
      const response = await tokenRequest(emulator, await params(emulator));
      expect(response.status).toBe(status);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer .*error="${error}"`));
      expect(await json(response)).toEqual({ error, error_description: expect.any(String) });
    },
  );

  it('row 4: a correct PKCE verifier is accepted', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const code = await obtainCode(emulator, { code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    expect((await tokenRequest(emulator, codeExchange(emulator, code, { code_verifier: VERIFIER }))).status).toBe(200);
  });

  it('row 4: a failed exchange does not burn the code; a reused code is refused but its first token stays valid', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const code = await obtainCode(emulator);
    expect(
      (await tokenRequest(emulator, codeExchange(emulator, code, { redirect_uri: 'http://127.0.0.1:1/wrong' }))).status,
    ).toBe(400);
    const first = await tokenRequest(emulator, codeExchange(emulator, code));
    expect(first.status).toBe(200);
    const token = (await json(first)).access_token;
    const reuse = await tokenRequest(emulator, codeExchange(emulator, code));
    expect(reuse.status).toBe(400);
    expect((await json(reuse)).error).toBe('invalid_grant');
    expect(
      (await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
  });

  it('row 4 and Other: a code expires after 600 s', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const code = await obtainCode(emulator);
    emulator.advanceSeconds(601);
    const response = await tokenRequest(emulator, codeExchange(emulator, code));
    expect(response.status).toBe(400);
    expect((await json(response)).error).toBe('invalid_grant');
  });
});

describe('token info GET /oauth2/token/info', () => {
  async function clientToken(emulator: TestEmulator): Promise<string> {
    const response = await tokenRequest(emulator, {
      grant_type: 'client_credentials',
      scope: 'service userinfo.email',
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
    });
    return (await json(response)).access_token;
  }

  it("row 1-2: the spec's record by default; the scheme in any case; the lifetime counts down", async () => {
    const emulator = await startTestEmulator();
    const token = await clientToken(emulator);
    emulator.advanceSeconds(100);
    const response = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `bEaReR ${token}` },
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toEqual({
      resource_owner_id: null,
      scope: ['service', 'userinfo.email'],
      expires_in_seconds: expect.any(Number),
      application: { uid: 1 },
    });
    expect(body.expires_in_seconds).toBeGreaterThanOrEqual(7099);
    expect(body.expires_in_seconds).toBeLessThanOrEqual(7100);
  });

  it("row 2: Doorkeeper 5's record with flavor doorkeeper5", async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const token = await clientToken(emulator);
    const body = await json(
      await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(body).toEqual({
      resource_owner_id: null,
      scope: ['service', 'userinfo.email'],
      expires_in: 7200,
      application: { uid: 'mmauth-demo' },
      created_at: expect.any(Number),
    });
  });

  it.each([
    ['garbage', async () => 'garbage'],
    ['missing', async () => undefined],
    [
      'revoked',
      async (e: TestEmulator) => {
        const token = await clientToken(e);
        await fetch(`${e.baseUrl}/oauth2/revoke`, {
          method: 'POST',
          body: new URLSearchParams({ token, client_id: e.client.clientId, client_secret: e.client.clientSecret }),
        });
        return token;
      },
    ],
    [
      'expired',
      async (e: TestEmulator) => {
        const token = await clientToken(e);
        e.advanceSeconds(7200);
        return token;
      },
    ],
  ])('row 3: a %s token gets the same 401 answer', async (_name, makeToken) => {
    const emulator = await startTestEmulator();
    const token = await makeToken(emulator);
    const response = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"',
    );
    expect(await json(response)).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is invalid',
      state: 'unauthorized',
    });
  });
});

describe('revoke POST /oauth2/revoke (RFC 7009)', () => {
  async function revoke(emulator: TestEmulator, params: Record<string, string>): Promise<Response> {
    return fetch(`${emulator.baseUrl}/oauth2/revoke`, { method: 'POST', body: new URLSearchParams(params) });
  }
  async function isActive(emulator: TestEmulator, token: string): Promise<boolean> {
    return (
      (await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } }))
        .status === 200
    );
  }
  async function newToken(emulator: TestEmulator): Promise<string> {
    return (
      await json(
        await tokenRequest(emulator, {
          grant_type: 'client_credentials',
          client_id: emulator.client.clientId,
          client_secret: emulator.client.clientSecret,
        }),
      )
    ).access_token;
  }

  it('row 1 and 3: 200 {} for a revoked, an unknown and an already revoked token; token_type_hint is ignored', async () => {
    const emulator = await startTestEmulator();
    const token = await newToken(emulator);
    const creds = { client_id: emulator.client.clientId, client_secret: emulator.client.clientSecret };
    for (const params of [{ token, token_type_hint: 'refresh_token' }, { token }, { token: 'unknown' }]) {
      const response = await revoke(emulator, { ...creds, ...params });
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({});
    }
    expect(await isActive(emulator, token)).toBe(false);
  });

  it('spec §4.4: wrong credentials still get 200, and the token lives', async () => {
    const emulator = await startTestEmulator();
    const token = await newToken(emulator);
    for (const params of [{ token }, { token, client_id: emulator.client.clientId, client_secret: 'wrong' }]) {
      expect((await revoke(emulator, params)).status).toBe(200);
    }
    expect(await isActive(emulator, token)).toBe(true);
  });

  it('row 2 (doorkeeper5): missing or wrong credentials get 403 unauthorized_client, and the token lives', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const token = await newToken(emulator);
    for (const params of [{ token }, { token, client_id: emulator.client.clientId, client_secret: 'wrong' }]) {
      const response = await revoke(emulator, params);
      expect(response.status).toBe(403);
      expect(await json(response)).toEqual({
        error: 'unauthorized_client',
        error_description: 'You are not authorized to revoke this token',
      });
    }
    expect(await isActive(emulator, token)).toBe(true);
  });
});

describe('other', () => {
  it.each([
    ['GET', '/oauth2/token'],
    ['POST', '/oauth2/token/info'],
    ['GET', '/oauth2/revoke'],
    ['GET', '/'],
  ])('%s %s is 404 with an empty HTML body', async (method, path) => {
    const emulator = await startTestEmulator();
    const response = await fetch(`${emulator.baseUrl}${path}`, { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(await response.text()).toBe('');
  });

  it('drops expired codes and tokens from memory', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    for (let i = 0; i < 5; i++) {
      await obtainCode(emulator);
      await newCC(emulator);
    }
    expect(emulator.state.sizes()).toMatchObject({ codes: 5, tokens: 6 });
    // A dead token's record is kept an hour, so that the API's 401 can say why (revoked, expired).
    emulator.advanceSeconds(7201 + 3601);
    await obtainCode(emulator);
    expect(emulator.state.sizes()).toMatchObject({ codes: 1, tokens: 1 });
  });
});

async function newCC(emulator: TestEmulator): Promise<void> {
  await tokenRequest(emulator, {
    grant_type: 'client_credentials',
    client_id: emulator.client.clientId,
    client_secret: emulator.client.clientSecret,
  });
}

describe('refresh tokens (server-behaviour.md, refresh tokens 1–6)', () => {
  async function codeFlowPair(emulator: TestEmulator): Promise<Json> {
    const response = await tokenRequest(emulator, codeExchange(emulator, await obtainCode(emulator)));
    return json(response);
  }
  const refreshWith = (emulator: TestEmulator, refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest(emulator, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
      ...extra,
    });
  const tokenInfo = (emulator: TestEmulator, token: string) =>
    fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } });
  const revoke = (emulator: TestEmulator, token: string) =>
    fetch(`${emulator.baseUrl}/oauth2/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        token,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    });

  it('row 1: only the code flow gets one; client credentials and implicit tokens never do', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    expect((await codeFlowPair(emulator)).refresh_token).toMatch(/^[\w-]{43}$/);
    const cc = await json(
      await tokenRequest(emulator, {
        grant_type: 'client_credentials',
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    );
    expect(cc).not.toHaveProperty('refresh_token');
  });

  it('rows 2–3: a new pair with the original lifetime; the old refresh token lives until the new access token is first used', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const first = await codeFlowPair(emulator);
    const second = await json(await refreshWith(emulator, first.refresh_token));
    expect(second).toMatchObject({
      token_type: 'bearer',
      expires_in: 7200,
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
    });
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // Not used yet: the old refresh token still works (a concurrent refresh succeeds).
    const third = await json(await refreshWith(emulator, first.refresh_token));
    expect(third.access_token).toMatch(/^[\w-]{43}$/);
    expect((await tokenInfo(emulator, third.access_token)).status).toBe(200);
    const afterUse = await refreshWith(emulator, first.refresh_token);
    expect(afterUse.status).toBe(400);
    expect((await json(afterUse)).error).toBe('invalid_grant');
    // The old pair is one record (rule 5): its access token ended with its refresh token (rule 3).
    expect((await tokenInfo(emulator, first.access_token)).status).toBe(401);
  });

  it('row 4: unknown refresh token 400 invalid_grant; wrong secret 401 invalid_client; refresh tokens off 400 unsupported_grant_type', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const pair = await codeFlowPair(emulator);
    expect((await json(await refreshWith(emulator, 'unknown-refresh-token'))).error).toBe('invalid_grant');
    const wrongSecret = await refreshWith(emulator, pair.refresh_token, { client_secret: 'wrong' });
    expect(wrongSecret.status).toBe(401);
    const off = await startTestEmulator({ autoApprove: true, refreshTokens: false });
    expect(await codeFlowPair(off)).not.toHaveProperty('refresh_token');
    const refused = await refreshWith(off, pair.refresh_token);
    expect(refused.status).toBe(400);
    expect((await json(refused)).error).toBe('unsupported_grant_type');
  });

  it.each(['spec', 'doorkeeper5'] as const)(
    'row 5: revoking either token of a live pair revokes both (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      for (const which of ['access_token', 'refresh_token'] as const) {
        const pair = await codeFlowPair(emulator);
        expect((await revoke(emulator, pair[which])).status).toBe(200);
        expect((await tokenInfo(emulator, pair.access_token)).status).toBe(401);
        expect((await refreshWith(emulator, pair.refresh_token)).status).toBe(400);
      }
    },
  );

  it('row 5: Doorkeeper 5.5 leaves the pair of an expired access token alone: its refresh token lives on', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS: 60 });
    const pair = await codeFlowPair(emulator);
    emulator.advanceSeconds(120);
    expect((await revoke(emulator, pair.access_token)).status).toBe(200);
    expect((await refreshWith(emulator, pair.refresh_token)).status).toBe(200);
  });

  it('row 6: refresh tokens have no expiry of their own', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, tokenTtlS: 60 });
    const pair = await codeFlowPair(emulator);
    emulator.advanceSeconds(30 * 86_400);
    expect((await refreshWith(emulator, pair.refresh_token)).status).toBe(200);
  });
});

describe('the lifecycle rows (server-behaviour.md Refresh tokens 3, 5–7; Doorkeeper 5.5), both flavors', () => {
  const FLAVORS = ['spec', 'doorkeeper5'] as const;
  async function pair(emulator: TestEmulator): Promise<Json> {
    return json(await tokenRequest(emulator, codeExchange(emulator, await obtainCode(emulator))));
  }
  const refreshWith = (emulator: TestEmulator, refreshToken: string) =>
    tokenRequest(emulator, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret ?? '',
    });
  const present = (emulator: TestEmulator, token: string) =>
    fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${token}` } });
  const revoke = (emulator: TestEmulator, token: string, hint?: string) =>
    fetch(`${emulator.baseUrl}/oauth2/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        token,
        ...(hint === undefined ? {} : { token_type_hint: hint }),
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret ?? '',
      }),
    });

  it.each(FLAVORS)(
    'rule 3: the previous access token works until the new one is first presented, then ends with its refresh token (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      const first = await pair(emulator);
      const second = await json(await refreshWith(emulator, first.refresh_token));
      // Doorkeeper 5.5: old token 200 → new token used → old token 401.
      expect((await present(emulator, first.access_token)).status).toBe(200);
      expect((await present(emulator, second.access_token)).status).toBe(200);
      expect((await present(emulator, first.access_token)).status).toBe(401);
      const me = await fetch(`${emulator.baseUrl}/api/me`, {
        headers: { authorization: `Bearer ${first.access_token}` },
      });
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toMatch(/revoked/);
      expect((await refreshWith(emulator, first.refresh_token)).status).toBe(400);
    },
  );

  it.each(FLAVORS)(
    'rule 7: two renewals with no use in between leave the first link alive; presenting its successor retires it (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      const first = await pair(emulator);
      const second = await json(await refreshWith(emulator, first.refresh_token));
      const third = await json(await refreshWith(emulator, second.refresh_token));
      expect((await present(emulator, third.access_token)).status).toBe(200);
      expect((await refreshWith(emulator, second.refresh_token)).status).toBe(400);
      // RT1 waits for AT2's first presentation, which never came.
      expect(emulator.state.refreshTokens.lookUp(first.refresh_token)).toBeDefined();
      // AT2's record ended when AT3 was presented (rule 3): 401, and RT1 retired all the same.
      expect((await present(emulator, second.access_token)).status).toBe(401);
      expect(emulator.state.refreshTokens.lookUp(first.refresh_token)).toBeUndefined();
    },
  );

  it.each(FLAVORS)(
    'rule 7: presenting an expired or revoked access token still retires the refresh token it replaced, with a 401 (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor, tokenTtlS: 60 });
      const first = await pair(emulator);
      const second = await json(await refreshWith(emulator, first.refresh_token));
      emulator.advanceSeconds(120);
      expect((await present(emulator, second.access_token)).status).toBe(401);
      expect((await refreshWith(emulator, first.refresh_token)).status).toBe(400);
      const third = await json(await refreshWith(emulator, second.refresh_token));
      emulator.state.revokeToken(third.access_token);
      const fourth = await json(await refreshWith(emulator, third.refresh_token));
      expect(fourth.error).toBe('invalid_grant');
    },
  );

  it('rule 6: refresh tokens never expire, even a year on (doorkeeper5)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS: 60 });
    const first = await pair(emulator);
    emulator.advanceSeconds(365 * 86_400);
    expect((await refreshWith(emulator, first.refresh_token)).status).toBe(200);
  });

  it('rule 5: revocation by refresh token of a live pair ends both; of an expired pair (doorkeeper5) does nothing', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS: 60 });
    const live = await pair(emulator);
    expect((await revoke(emulator, live.refresh_token, 'refresh_token')).status).toBe(200);
    expect((await present(emulator, live.access_token)).status).toBe(401);
    expect((await refreshWith(emulator, live.refresh_token)).status).toBe(400);
    const old = await pair(emulator);
    emulator.advanceSeconds(120);
    expect((await revoke(emulator, old.refresh_token, 'refresh_token')).status).toBe(200);
    expect((await refreshWith(emulator, old.refresh_token)).status).toBe(200);
  });

  it.each(FLAVORS)(
    'a lower-case "basic" scheme is no Basic credential (Doorkeeper matches /^Basic /): 401 invalid_client (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ flavor });
      const credential = Buffer.from(`${emulator.client.clientId}:${emulator.client.clientSecret ?? ''}`).toString(
        'base64',
      );
      const lower = await tokenRequest(
        emulator,
        { grant_type: 'client_credentials' },
        { authorization: `basic ${credential}` },
      );
      expect(lower.status).toBe(401);
      expect((await json(lower)).error).toBe('invalid_client');
      const proper = await tokenRequest(
        emulator,
        { grant_type: 'client_credentials' },
        { authorization: `Basic ${credential}` },
      );
      expect(proper.status).toBe(200);
    },
  );

  it.each(FLAVORS)(
    'a JSON body at the token endpoint is accepted, as Rails parses it for Doorkeeper (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ flavor });
      const response = await fetch(`${emulator.baseUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: emulator.client.clientId,
          client_secret: emulator.client.clientSecret,
        }),
      });
      expect(response.status).toBe(200);
      expect((await json(response)).access_token).toMatch(/^[\w-]{43}$/);
    },
  );

  it.each(FLAVORS)(
    'client credentials for a public client: granted on client_id alone, as Doorkeeper 5.5 authenticates it (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ flavor });
      const response = await tokenRequest(emulator, {
        grant_type: 'client_credentials',
        client_id: emulator.publicClient.clientId,
      });
      expect(response.status).toBe(200);
      expect(await json(response)).not.toHaveProperty('refresh_token');
    },
  );

  it.each(FLAVORS)(
    'a registered redirect URI with a query: the same parts in any order match, others do not; a query added to one without is ignored (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      emulator.state.clients.set('with-query', {
        uid: 99,
        clientId: 'with-query',
        clientSecret: 'with-query-secret',
        name: 'With query',
        redirectUris: ['http://127.0.0.1/callback?tenant=a&x=1'],
      });
      const status = async (clientId: string, redirectUri: string) =>
        (await authorize(emulator, { client_id: clientId, redirect_uri: redirectUri })).status;
      expect(await status('with-query', 'http://127.0.0.1:5000/callback?x=1&tenant=a')).toBe(302);
      expect(await status('with-query', 'http://127.0.0.1:5000/callback?tenant=a')).toBe(200);
      expect(await status('with-query', 'http://127.0.0.1:5000/callback')).toBe(200);
      expect(await status(emulator.client.clientId, 'http://127.0.0.1:5000/callback?extra=1')).toBe(302);
    },
  );

  it.each(FLAVORS)(
    'response_mode=query with response_type=token: an error page (unsupported_response_mode), never a redirect (%s)',
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor });
      const response = await authorize(emulator, { response_type: 'token', response_mode: 'query' });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('unsupported_response_mode');
      expect((await authorize(emulator, { response_type: 'token', response_mode: 'fragment' })).status).toBe(302);
    },
  );

  it.each(FLAVORS)(
    "/api/me's 401 as doorkeeper_authorize! sends it: no body, the reason in WWW-Authenticate, no-store (%s)",
    async (flavor) => {
      const emulator = await startTestEmulator({ autoApprove: true, flavor, tokenTtlS: 60 });
      const api = (token: string) =>
        fetch(`${emulator.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` } });
      const revoked = await pair(emulator);
      emulator.state.revokeToken(revoked.access_token);
      const expired = await pair(emulator);
      emulator.advanceSeconds(120);
      for (const [token, reason] of [
        [revoked.access_token, 'The access token was revoked'],
        [expired.access_token, 'The access token expired'],
        ['unknown-token', 'The access token is invalid'],
      ] as const) {
        const response = await api(token);
        expect(response.status).toBe(401);
        expect(await response.text()).toBe('');
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(response.headers.get('www-authenticate')).toBe(
          `Bearer realm="Doorkeeper", error="invalid_token", error_description="${reason}"`,
        );
      }
    },
  );
});

describe('token introspection (RFC 7662), as Doorkeeper 5.5 serves it: doorkeeper5 only', () => {
  const introspect = (emulator: TestEmulator, token: string, secret: string) =>
    fetch(`${emulator.baseUrl}/oauth2/introspect`, {
      method: 'POST',
      body: new URLSearchParams({ token, client_id: emulator.client.clientId, client_secret: secret }),
    });

  it('the client authenticates; its live token is active, a dead or unknown one is not; a wrong secret is 401 invalid_client; the spec flavor has none (404)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS: 60 });
    const pair = await json(await tokenRequest(emulator, codeExchange(emulator, await obtainCode(emulator))));
    const live = await introspect(emulator, pair.access_token, emulator.client.clientSecret);
    expect(live.status).toBe(200);
    expect(await json(live)).toMatchObject({ active: true, client_id: emulator.client.clientId, scope: 'service' });
    expect(await json(await introspect(emulator, 'unknown', emulator.client.clientSecret))).toEqual({ active: false });
    const refused = await introspect(emulator, pair.access_token, 'wrong');
    expect(refused.status).toBe(401);
    expect((await json(refused)).error).toBe('invalid_client');
    emulator.advanceSeconds(120);
    expect(await json(await introspect(emulator, pair.access_token, emulator.client.clientSecret))).toEqual({
      active: false,
    });
    const spec = await startTestEmulator({ autoApprove: true });
    expect((await introspect(spec, 'x', spec.client.clientSecret)).status).toBe(404);
  });
});
