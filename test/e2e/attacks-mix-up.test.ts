/**
 * Mix-up without `iss` (M6; RFC 9700 §4.4.2): the defence where a server sends no `iss` is a
 * redirect URI of its own per server. A profile's callback path is a setting honoured end to end
 * (the listener answers that path only), and login and doctor warn when two profiles on different
 * servers share one while either server sends no `iss`.
 */
import { describe, expect, it } from 'vitest';
import { runHeadlessBrowser } from '../../src/demo/headless-browser.js';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;

/** A headless user agent that signs in as the demo user and allows access. */
const allow = { login: 'demo', password: 'demo', decision: 'allow' as const, log: () => undefined, timeoutMs: 10_000 };

describe('M6: a callback path per profile', () => {
  it('login --callback-path: the authorization request names it, the listener answers only it (a response at /callback is refused and nothing exchanged), the profile keeps it for the next login', async () => {
    const emulator = await startTestEmulator({ redirectPath: '/callback/work' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    const login = startCli(['login', '--no-browser', '--wait', '20', '--callback-path', '/callback/work'], { env });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    const authorize = new URL(url);
    const redirectUri = new URL(authorize.searchParams.get('redirect_uri') ?? '');
    expect(redirectUri.pathname).toBe('/callback/work');
    // A response that reaches the default path (a server registered with /callback) is refused.
    const state = authorize.searchParams.get('state') ?? '';
    const elsewhere = await fetch(`http://127.0.0.1:${redirectUri.port}/callback?code=stolen&state=${state}`);
    expect(elsewhere.status).toBe(404);
    expect(emulator.requests.some((r) => r.url === '/oauth2/token')).toBe(false);
    const page = await runHeadlessBrowser(url, allow);
    expect(page.body).toContain('data-result="success"');
    const result = await login.done;
    expect(result.code, result.stderr).toBe(0);
    expect((readConfig(configDir) as Json).profiles.default.callback_path).toBe('/callback/work');
    // The next login uses the stored path without the flag.
    const again = await runCli(['login'], { env: { ...env, BROWSER: HEADLESS_BROWSER } });
    expect(again.code, again.stderr).toBe(0);
    // (The emulator, as Doorkeeper, matches a registered path exactly: another path would have been refused.)
    const named = emulator.requests
      .map((r) => new URL(r.url, emulator.baseUrl).searchParams.get('redirect_uri'))
      .filter((uri) => uri !== null);
    expect(named.length).toBeGreaterThanOrEqual(2);
    expect(named.every((uri) => new URL(uri).pathname === '/callback/work')).toBe(true);
  });

  it.each([['/callback/../x'], ['callback'], ['/cb?x=1'], ['/a b']])(
    '--callback-path %s is refused before anything is sent (exit 2)',
    async (path) => {
      const emulator = await startTestEmulator();
      const result = await runCli(['login', '--callback-path', path], {
        env: emulator.env(makeConfigDir(), { BROWSER: HEADLESS_BROWSER }),
      });
      expect(result.code, result.stderr).toBe(2);
      expect(emulator.requests).toEqual([]);
    },
  );

  it('two profiles on servers that send no iss, both on /callback: login warns once per pair and doctor every time, naming the other profile and the way out; distinct paths: no warning', async () => {
    const trusted = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    const other = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const at = (emulator: typeof trusted) =>
      emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['login', '--profile', 'work'], { env: at(trusted) })).code).toBe(0);
    const second = await runCli(['login', '--profile', 'side'], { env: at(other) });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('profile "work" on another server also listens on /callback');
    expect(second.stderr).toContain('--callback-path /callback/side');
    // Once per pair of profiles: the next logins of either say nothing more of it.
    for (const [name, server] of [
      ['side', other],
      ['work', trusted],
    ] as const) {
      const again = await runCli(['login', '--profile', name], { env: at(server) });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('also listens on');
    }
    const doctor = await runCli(['doctor', '--json', '--profile', 'side'], { env: at(other) });
    const check = ((JSON.parse(doctor.stdout) as Json).checks as Json[]).find((c) => c.name === 'callback path');
    expect(check?.status).toBe('warn');
    expect(check?.detail).toContain('"work"');
    // With a path of its own (registered so with its server), nothing to warn of.
    const distinct = await startTestEmulator({
      autoApprove: true,
      flavor: 'doorkeeper5',
      redirectPath: '/callback/own',
    });
    const own = await runCli(['login', '--profile', 'own', '--callback-path', '/callback/own'], { env: at(distinct) });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).not.toContain('also listens on');
  });
});
