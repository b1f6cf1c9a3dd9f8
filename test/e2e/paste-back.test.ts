import { describe, expect, it } from 'vitest';
import { runHeadlessBrowser } from '../../src/demo/headless-browser.js';
import { makeConfigDir, startCli } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';

/** A browser on another machine: it signs in but cannot load the loopback redirect URI. */
const remoteAgent = {
  login: 'demo',
  password: 'demo',
  decision: 'allow' as const,
  log: () => undefined,
  timeoutMs: 10_000,
  isRedirectUnreachable: true,
};
const AUTHORIZE_URL = /http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/;

describe('paste-back: the URL the browser ended on, typed on stdin while the listener waits', () => {
  it('code flow: skips what is not the redirect, refuses a wrong state, then exchanges the pasted code', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], {
      env: emulator.env(configDir),
      isStdinOpen: true,
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const ended = await runHeadlessBrowser(url, remoteAgent);
    expect(ended.status).toBe(0);
    expect(ended.finalUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);

    login.child.stdin?.write('this is not a url\n');
    await login.waitForStderr(/not accepted: what was pasted is not a URL/);
    login.child.stdin?.write('http://127.0.0.1:1/elsewhere?code=x&state=y\n');
    await login.waitForStderr(/not accepted: the pasted URL is not the redirect URI/);
    const forged = new URL(ended.finalUrl);
    forged.searchParams.set('state', 'forged');
    login.child.stdin?.write(`${forged.href}\n`);
    await login.waitForStderr(/not accepted: callback rejected: unexpected "state" value/);
    expect(emulator.requests.some((r) => r.url === '/oauth2/token')).toBe(false);

    login.child.stdin?.write(`  ${ended.finalUrl}  \n`);
    const result = await login.done;
    expect(result.stderr).toContain('Logged in to');
    expect(result.code).toBe(0);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
    expect(readConfig(configDir)).toMatchObject({ profiles: { default: { token: { grant: 'authorization_code' } } } });
    // The listener closed with the pasted answer: nothing listens on the redirect port any more.
    await expect(fetch(ended.finalUrl)).rejects.toThrow();
  });

  it('implicit flow: the pasted URL carries the token in its fragment', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--implicit', '--no-browser', '--wait', '15'], {
      env: emulator.env(configDir),
      isStdinOpen: true,
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const ended = await runHeadlessBrowser(url, remoteAgent);
    expect(ended.finalUrl).toMatch(/\/callback#access_token=/);
    login.child.stdin?.write(`${ended.finalUrl}\n`);
    const result = await login.done;
    expect(result.code).toBe(0);
    const token = new URLSearchParams(new URL(ended.finalUrl).hash.slice(1)).get('access_token');
    expect(readConfig(configDir)).toMatchObject({
      profiles: { default: { token: { access_token: token, grant: 'implicit' } } },
    });
  });

  it('the listener still wins when the browser reaches it, and stdin stays unread afterwards', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], {
      env: emulator.env(configDir),
      isStdinOpen: true,
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const page = await runHeadlessBrowser(url, { ...remoteAgent, isRedirectUnreachable: false });
    expect(page.body).toContain('data-result="success"');
    const result = await login.done;
    expect(result.code).toBe(0);
  });

  it('a pasted denial ends the login with exit 4', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const login = startCli(['login', '--no-browser', '--wait', '15'], {
      env: emulator.env(configDir),
      isStdinOpen: true,
    });
    const [url] = await login.waitForStderr(AUTHORIZE_URL);
    const ended = await runHeadlessBrowser(url, { ...remoteAgent, decision: 'deny' });
    login.child.stdin?.write(`${ended.finalUrl}\n`);
    const result = await login.done;
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('access_denied');
    expect(readConfigText(configDir)).toBeUndefined();
  });
});
