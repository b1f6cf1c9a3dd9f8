/**
 * mmauth as a library (issue 32): getToken and createTokenSource against the real emulator, in
 * process, beside spawned `mmauth` binaries sharing the same config directory.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it, onTestFinished } from 'vitest';
import { createTokenSource, getToken, login, LoginRequiredError, logout, MmauthError } from '../../src/index.js';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli } from '../support/cli.js';
import { readConfig, startTestEmulator, refreshGrants, refreshWith } from '../support/emulator.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';
import { startGateProxy } from '../support/gate-proxy.js';

type Json = Record<string, any>;
const stored = (configDir: string, profile = 'default'): Json => (readConfig(configDir) as Json).profiles[profile];

/** A code-flow profile signed in at an emulator (file store), and the environment the library reads. */
async function signedIn(options: { tokenTtlS?: number } = {}) {
  const emulator = await startTestEmulator({ flavor: 'doorkeeper5', autoApprove: true, ...options });
  const configDir = makeConfigDir();
  const cliEnv = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
  expect((await runCli(['login'], { env: cliEnv })).code).toBe(0);
  // What the library reads instead of process.env: the config directory alone (and the secret for renewals).
  const env = {
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    MMAUTH_PROFILE: '',
    MMAUTH_TOKEN: '',
    MMAUTH_BASE_URL: '',
  };
  return { emulator, configDir, cliEnv, env };
}

/** Makes the stored token stale for the local clock (2 s left of a lifetime of 7200 s), alive at the server. */
function makeStale(configDir: string): void {
  const config = readConfig(configDir) as Json;
  const token = config.profiles.default.token;
  token.obtained_at = new Date(Date.now() - 7_198_000).toISOString();
  token.expires_at = new Date(Date.now() + 2_000).toISOString();
  writeFileSync(`${configDir}/config.json`, JSON.stringify(config), { mode: 0o600 });
}

describe('getToken', () => {
  it("hands out the profile's token as `mmauth token` does, with its expiry and scopes; a fresh one costs no request", async () => {
    const { emulator, configDir, env } = await signedIn();
    const token = await getToken({ env });
    expect(token.accessToken).toBe(stored(configDir).token.access_token);
    expect(token).toMatchObject({ tokenType: 'Bearer', profile: 'default', scope: ['service'] });
    // The profile's server, where the token may go: a newcomer's first example needs no MMAUTH_BASE_URL.
    expect(token.baseUrl).toBe(emulator.baseUrl);
    expect(token.expiresAt).toBeInstanceOf(Date);
    const before = emulator.requests.length;
    for (let i = 0; i < 1_000; i++) expect((await getToken({ env })).accessToken).toBe(token.accessToken);
    expect(emulator.requests.length).toBe(before);
  });

  it('an empty profile: LoginRequiredError not_logged_in, exit code 4; an unknown one: unknown_profile', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { empty: { base_url: 'https://maps.example.com', client_id: 'x' } });
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_TOKEN: '', MMAUTH_PROFILE: '' };
    const empty = await getToken({ env, profile: 'empty' }).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(LoginRequiredError);
    expect(empty).toBeInstanceOf(MmauthError);
    expect(empty).toMatchObject({ code: 'not_logged_in', exitCode: 4 });
    const unknown = await getToken({ env, profile: 'nosuch' }).catch((error: unknown) => error);
    expect(unknown).toMatchObject({ name: 'LoginRequiredError', code: 'unknown_profile', exitCode: 4 });
  });

  it('the library and a spawned `mmauth token` renewing one stale profile at the same moment: one refresh grant, the same new token', async () => {
    const { emulator, configDir, cliEnv, env } = await signedIn();
    makeStale(configDir);
    const old = stored(configDir).token.access_token as string;
    const cli = startCli(['token'], { env: { ...cliEnv, MMAUTH_BASE_URL: undefined, MMAUTH_CLIENT_ID: undefined } });
    const [fromLibrary, fromCli] = await Promise.all([getToken({ env }), cli.done]);
    expect(fromCli.code, fromCli.stderr).toBe(0);
    expect(fromLibrary.accessToken).not.toBe(old);
    expect(fromCli.stdout.trim()).toBe(fromLibrary.accessToken);
    expect(refreshGrants(emulator)).toBe(1);
  });

  it('another process renewing is seen at the next call (the config file changed)', async () => {
    const { configDir, cliEnv, env } = await signedIn();
    const first = await getToken({ env, minTtl: 10 });
    expect((await runCli(['refresh'], { env: { ...cliEnv, MMAUTH_BASE_URL: undefined } })).code).toBe(0);
    const next = await getToken({ env, minTtl: 10 });
    expect(next.accessToken).not.toBe(first.accessToken);
    expect(next.accessToken).toBe(stored(configDir).token.access_token);
  });

  it('nothing a program gets holds a refresh token or a secret: properties, JSON, inspection (property test)', async () => {
    const { configDir, env, emulator } = await signedIn();
    const refreshToken = stored(configDir).token.refresh_token as string;
    const source = createTokenSource({ env });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3600 }), async (minTtl) => {
        const token = await getToken({ env, minTtl });
        const views = [
          JSON.stringify(token),
          inspect(token, { showHidden: true, depth: 5 }),
          inspect(source, { showHidden: true, depth: 5 }),
          JSON.stringify(Object.values(token)),
          JSON.stringify(await source.getHeaders()),
        ];
        for (const view of views) {
          expect(view).not.toContain(refreshToken);
          expect(view).not.toContain(emulator.client.clientSecret);
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('createTokenSource', () => {
  it('fetch after the access token was ended at the server: 401, one renewal, one replay, 200', async () => {
    const { emulator, configDir, env } = await signedIn();
    const source = createTokenSource({ env });
    expect((await source.fetch('/api/me')).status).toBe(200);
    // The access token's record ended (as a rotation elsewhere ends it), its refresh token alive.
    const record = emulator.state.findToken(stored(configDir).token.access_token);
    if (record !== undefined) record.revokedAtMs = Date.now();
    const grants = refreshGrants(emulator);
    const response = await source.fetch('/api/echo', { method: 'POST', body: 'replayable' });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('replayable');
    expect(refreshGrants(emulator) - grants).toBe(1);
    const echoes = emulator.requests.filter((r) => r.url === '/api/echo');
    expect(echoes).toHaveLength(2);
    expect(echoes[1]?.headers.authorization).toBe(`Bearer ${stored(configDir).token.access_token}`);
  });

  it('401s that are not about the token (bad client credentials at /oauth2/token): one renewal, not one per request (P4)', async () => {
    const { emulator, configDir, env } = await signedIn();
    const source = createTokenSource({ env });
    const grants = refreshGrants(emulator);
    const badClient = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'x', client_secret: 'wrong' });
    for (let i = 0; i < 10; i++) {
      const answer = await source.fetch('/oauth2/token', { method: 'POST', body: badClient });
      expect(answer.status).toBe(401);
      await answer.arrayBuffer();
    }
    expect(refreshGrants(emulator) - grants).toBe(1);
    // A token the service really ended is renewed at once, within the same minute.
    const record = emulator.state.findToken(stored(configDir).token.access_token);
    if (record !== undefined) record.revokedAtMs = Date.now();
    expect((await source.fetch('/api/me')).status).toBe(200);
    expect(refreshGrants(emulator) - grants).toBe(2);
  });

  it('another origin gets no Authorization; a redirect is not followed', async () => {
    const { emulator, env } = await signedIn();
    const seen: Array<string | undefined> = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/x`;
    const source = createTokenSource({ env });
    expect((await source.fetch(otherUrl, { headers: { authorization: 'Bearer mine' } })).status).toBe(200);
    expect(seen).toEqual([undefined]);
    // An auto-approving authorize endpoint answers 302 to the (other) redirect URI: not followed.
    const authorize = `/oauth2/authorize?response_type=code&client_id=${emulator.client.clientId}&redirect_uri=${encodeURIComponent('http://127.0.0.1/callback')}&scope=service&state=s`;
    const redirect = await source.fetch(authorize);
    expect(redirect.status).toBe(302);
    expect(seen).toHaveLength(1);
  });

  it('a streamed body is not replayed: the 401 comes back, no renewal', async () => {
    const { emulator, configDir, env } = await signedIn();
    const source = createTokenSource({ env });
    await source.getToken();
    const record = emulator.state.findToken(stored(configDir).token.access_token);
    if (record !== undefined) record.revokedAtMs = Date.now();
    const grants = refreshGrants(emulator);
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'));
        controller.close();
      },
    });
    const response = await source.fetch('/api/echo', { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(401);
    expect(refreshGrants(emulator)).toBe(grants);
  });
});

describe('L3: the errors the library throws hold no secret it sent', () => {
  it.each([
    ['in error_description', (body: string) => ({ error: 'invalid_request', error_description: `bad: ${body}` })],
    ['in a field of its own', (body: string) => ({ error: 'invalid_grant', received: body })],
    ['in a body that is no OAuth error', (body: string) => ({ message: body })],
    ['as plain text', (body: string) => `you sent ${body}`],
  ])(
    'a token endpoint echoing the refresh request %s: message, stack, cause chain, util.inspect and JSON.stringify hold neither the refresh token nor the client secret',
    async (_where, answer) => {
      const refreshToken = `refresh-${'r'.repeat(40)}`;
      const clientSecret = `secret-${'s'.repeat(40)}`;
      const echo = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const echoed = answer(`${body} ${String(req.headers.authorization)}`);
          res.writeHead(400, { 'content-type': typeof echoed === 'string' ? 'text/plain' : 'application/json' });
          res.end(typeof echoed === 'string' ? echoed : JSON.stringify(echoed));
        });
      });
      await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => void echo.close());
      const configDir = makeConfigDir();
      writeProfiles(configDir, {
        default: {
          base_url: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`,
          client_id: 'app',
          credential_store: 'file',
          token: { ...storedToken('o'.repeat(43), inS(-10)), refresh_token: refreshToken },
        },
      });
      const env = {
        MMAUTH_CONFIG_DIR: configDir,
        MMAUTH_CLIENT_SECRET: clientSecret,
        MMAUTH_TOKEN: '',
        MMAUTH_PROFILE: '',
      };
      const error = await getToken({ env }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(MmauthError);
      const views: string[] = [inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error)];
      for (let e: unknown = error; e instanceof Error; e = e.cause) {
        views.push(e.message, e.stack ?? '', inspect(e, { depth: 10 }), JSON.stringify(Object.entries(e)));
      }
      for (const view of views) {
        expect(view).not.toContain(refreshToken);
        expect(view).not.toContain(clientSecret);
        expect(view).not.toContain(Buffer.from(`app:${clientSecret}`).toString('base64'));
      }
    },
  );
});

describe("errors in the library's terms", () => {
  it('a refused grant is refresh_refused with what to do next; a lifetime too short for minTtl names the minTtl option, not --min-ttl', async () => {
    const { emulator, configDir, env } = await signedIn({ tokenTtlS: 120 });
    const tooLong = await getToken({ env, minTtl: 3_600 }).then(
      () => undefined,
      (thrown: unknown) => thrown as MmauthError,
    );
    expect(tooLong?.code).toBe('token_lifetime_too_short');
    expect(`${tooLong?.message ?? ''} ${tooLong?.hint ?? ''}`).toContain('minTtl');
    expect(`${tooLong?.message ?? ''} ${tooLong?.hint ?? ''}`).not.toContain('--min-ttl');
    // The grant is revoked on the server (its refresh token): the next renewal is refused.
    makeStale(configDir);
    const revoke = await fetch(`${emulator.baseUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: stored(configDir).token.refresh_token,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    });
    expect(revoke.status).toBe(200);
    const refused = await getToken({ env }).then(
      () => undefined,
      (thrown: unknown) => thrown as MmauthError,
    );
    expect(refused).toBeInstanceOf(LoginRequiredError);
    expect(refused?.code).toBe('refresh_refused');
    expect(refused?.hint).toContain('mmauth login');
    expect(typeof refused?.exitCode).toBe('number');
  });
});

describe('MmauthError.exitCode', () => {
  it('is a number on every error, one made by a program too (the CLI exit table: 4 refused, 3 network, 2 usage, 1 other)', () => {
    expect(new MmauthError('not_logged_in', 'no token').exitCode).toBe(4);
    expect(new MmauthError('connection_failed', 'refused').exitCode).toBe(3);
    expect(new MmauthError('usage', 'bad option').exitCode).toBe(2);
    expect(new MmauthError('token_endpoint_error', 'refused', { oauthError: 'invalid_grant' }).exitCode).toBe(4);
    expectTypeOf(new MmauthError('usage', 'x').exitCode).toEqualTypeOf<number>();
  });
});

describe('a signal stops the wait, never the renewal', () => {
  it('getToken({ signal }) aborted while the token endpoint answers 5 s late: rejects at once with interrupted; the pair the server minted is stored; logout then leaves every refresh token refused', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5', autoApprove: true });
    const gate = await startGateProxy(emulator.baseUrl);
    const configDir = makeConfigDir();
    const cliEnv = {
      ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' }),
      MMAUTH_BASE_URL: gate.baseUrl,
    };
    expect((await runCli(['login'], { env: cliEnv })).code).toBe(0);
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: emulator.client.clientSecret };
    makeStale(configDir);
    const before = stored(configDir).token;
    // The server mints at once; its answer reaches the program 5 s later.
    gate.set('POST /oauth2/token', { answerDelayMs: 5_000 });
    const started = Date.now();
    const aborted = await getToken({ env, signal: AbortSignal.timeout(300) }).then(
      () => undefined,
      (thrown: unknown) => thrown as MmauthError,
    );
    expect(aborted?.code).toBe('interrupted');
    // What must hold: the caller got its answer before the server's (5 s).
    expect(Date.now() - started).toBeLessThan(5_000);
    // The renewal went on in this process and stored the server's answer.
    const endMs = Date.now() + 20_000;
    while (stored(configDir).token.access_token === before.access_token && Date.now() < endMs) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = stored(configDir).token;
    expect(after.access_token).not.toBe(before.access_token);
    expect(refreshGrants(emulator)).toBe(1);
    gate.set('POST /oauth2/token', 'pass');
    expect((await runCli(['logout'], { env: { ...cliEnv, MMAUTH_BASE_URL: undefined } })).code).toBe(0);
    for (const refreshToken of [before.refresh_token, after.refresh_token]) {
      const answer = await refreshWith(emulator, refreshToken as string);
      expect(answer.status).toBe(400);
    }
  });
});

describe('login() and logout()', () => {
  /** An opener as a program would pass one: the headless user agent the demo uses, started on the URL. */
  function headlessOpener(opened: string[]): (url: string) => Promise<void> {
    return async (url) => {
      opened.push(url);
      const [command = '', ...args] = HEADLESS_BROWSER.split(' ');
      const child = spawn(command, [...args, url], { stdio: 'ignore' });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', () => resolve());
        child.once('error', reject);
      });
    };
  }

  it('signs in through the browser opener, stores the grant as the CLI does (`mmauth token` prints the same token), and logout() ends it (token info refuses it)', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5', autoApprove: true });
    const configDir = makeConfigDir();
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' };
    const opened: string[] = [];
    const token = await login({
      env,
      baseUrl: emulator.baseUrl,
      clientId: emulator.client.clientId,
      clientSecret: emulator.client.clientSecret,
      openBrowser: headlessOpener(opened),
    });
    // The opener got the listener's one-time start address, never the authorization URL with state.
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(opened[0]).not.toMatch(/state=|code_challenge/);
    expect(token).toMatchObject({ profile: 'default', baseUrl: emulator.baseUrl, tokenType: 'Bearer' });
    const cli = await runCli(['token'], { env });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(`${token.accessToken}\n`);
    expect(stored(configDir).client_secret).toBe(emulator.client.clientSecret);
    const ended = await logout({ env });
    expect(ended).toMatchObject({ profile: 'default', loggedOut: true, revoked: true, confirmed: true });
    const info = await fetch(`${emulator.baseUrl}/oauth2/token/info`, {
      headers: { authorization: `Bearer ${token.accessToken}` },
    });
    expect(info.status).toBe(401);
    expect(stored(configDir).token).toBeUndefined();
  });

  it('a confidential client without a secret fails before any browser opens: client_secret_required', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5', autoApprove: true });
    const opened: string[] = [];
    const failure = await login({
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CLIENT_SECRET: '' },
      baseUrl: emulator.baseUrl,
      clientId: emulator.client.clientId,
      openBrowser: headlessOpener(opened),
    }).then(
      () => undefined,
      (thrown: unknown) => thrown as MmauthError,
    );
    expect(failure).toBeInstanceOf(MmauthError);
    expect(failure?.code).toBe('client_secret_required');
    expect(failure?.hint ?? '').not.toMatch(/--client-secret/);
    expect(opened).toEqual([]);
    // At most the probe that tells a confidential client from an unknown one (one GET, no browser).
    expect(
      emulator.requests.filter((request) => request.url.startsWith('/oauth2/authorize')).length,
    ).toBeLessThanOrEqual(1);
  });

  it('the public client signs in without a secret', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5', autoApprove: true });
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_CLIENT_SECRET: '' };
    const token = await login({
      env,
      baseUrl: emulator.baseUrl,
      clientId: emulator.publicClient.clientId,
      openBrowser: headlessOpener([]),
    });
    expect((await getToken({ env })).accessToken).toBe(token.accessToken);
  });
});

describe("a library error's stack", () => {
  it('begins with the whole message (the redaction takes no word of it), its own and through the library', async () => {
    const { MmauthError } = await import('../../src/index.js');
    const made = new MmauthError('store_malformed', 'config file /tmp/x/config.json is not valid JSON');
    expect(made.stack?.split('\n')[0]).toBe('MmauthError: config file /tmp/x/config.json is not valid JSON');
    const { toLibraryError } = await import('../../src/library/library-errors.js');
    const thrown = toLibraryError(made);
    expect(thrown.stack?.split('\n')[0]).toBe('MmauthError: config file /tmp/x/config.json is not valid JSON');
    expect(thrown.message).toBe('config file /tmp/x/config.json is not valid JSON');
  });
});
