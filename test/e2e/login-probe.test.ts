/**
 * login fails fast: before it waits, it asks the authorization endpoint once, as the browser will,
 * and a request the server rejects (its HTML error page, never a redirect) or a server that is down
 * ends the login at once instead of after --wait.
 */
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { answer, startHostileServer } from '../support/hostile-server.js';

describe('login asks the authorization endpoint before it waits', () => {
  it.each([
    ['a wrong client id', ['--client-id', 'no-such-client'], 'invalid_client', '--client-id'],
    [
      'an unregistered redirect URI',
      ['--redirect-uri', 'http://localhost:18976/elsewhere'],
      'invalid_redirect_uri',
      '--redirect-uri',
    ],
    ['an unknown scope', ['--scope', 'bogus'], 'invalid_scope', '--scope'],
  ])('%s: exit 2 within a few seconds, quoting the server, naming the flag', async (_what, args, error, flag) => {
    const emulator = await startTestEmulator();
    const startedMs = Date.now();
    const result = await runCli(['login', '--no-browser', ...args], {
      env: emulator.env(makeConfigDir()),
      timeoutMs: 20_000,
    });
    const elapsedMs = Date.now() - startedMs;
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`the authorization endpoint rejected the request (${error}):`);
    expect(result.stderr).toContain(flag);
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it("a plain-text 400 from what stands before the server (a gateway, a framework): the reason is quoted, sanitised, not just 'HTTP 400'", async () => {
    const server = await startHostileServer({
      'GET /oauth2/authorize': answer(
        400,
        'Bad Request: redirect_uri\u001b[31m is not on the allow list\n',
        'text/plain',
      ),
    });
    const result = await runCli(['login', '--no-browser', '--base-url', server.baseUrl, '--client-id', 'app'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir() },
      timeoutMs: 20_000,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      'the authorization endpoint rejected the request: HTTP 400: Bad Request: redirect_uri [31m is not on the allow list',
    );
    expect(result.stderr).not.toContain('\u001b');
  });

  it('a server that is down: exit 3 within a few seconds, naming the URL', async () => {
    const emulator = await startTestEmulator();
    await emulator.close();
    const startedMs = Date.now();
    const result = await runCli(['login', '--no-browser'], { env: emulator.env(makeConfigDir()), timeoutMs: 20_000 });
    expect(result.code).toBe(3);
    // 14: method, origin and path: never the ~280 characters of state and code_challenge.
    const errorLine = result.stderr.split('\n').find((line) => line.startsWith('error:')) ?? '';
    expect(errorLine).toContain(`GET ${emulator.baseUrl}/oauth2/authorize:`);
    expect(errorLine).not.toMatch(/state=|code_challenge/);
    expect(Date.now() - startedMs).toBeLessThan(5_000);
  });

  it('--no-probe skips it: the login waits for --wait as before', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(
      ['login', '--no-browser', '--no-probe', '--client-id', 'no-such-client', '--wait', '1'],
      {
        env: emulator.env(makeConfigDir()),
      },
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('no redirect arrived');
    expect(emulator.requests.filter((r) => r.url.startsWith('/oauth2/authorize'))).toHaveLength(0);
  });

  it('an auto-approving server: the probe creates no token anyone uses (implicit: it is revoked at once)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, {
      BROWSER: HEADLESS_BROWSER,
      MMAUTH_CLIENT_ID: 'mmauth-public',
      MMAUTH_CLIENT_SECRET: undefined,
    });
    const login = await runCli(['login', '--implicit'], { env });
    expect(login.code, login.stderr).toBe(0);
    const revocations = emulator.requests.filter((r) => r.url === '/oauth2/revoke');
    expect(revocations).toHaveLength(1);
    const probeToken = new URLSearchParams(revocations[0]?.body).get('token') ?? '';
    expect(
      (await fetch(`${emulator.baseUrl}/oauth2/token/info`, { headers: { authorization: `Bearer ${probeToken}` } }))
        .status,
    ).toBe(401);
    const info = await runCli(['info'], { env });
    expect(info.code, info.stderr).toBe(0);
  });
});
