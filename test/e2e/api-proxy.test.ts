/**
 * `mmauth proxy` and `exec --proxy` (issue 33): a program calls the service's API through
 * 127.0.0.1 and never holds a token. The spawned binary against the emulator; raw sockets for the
 * requests a well-behaved client would never send.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli } from '../support/cli.js';
import { readConfig, startTestEmulator, refreshGrants } from '../support/emulator.js';

type Json = Record<string, any>;

async function signedIn(tokenTtlS = 7200) {
  const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS });
  const configDir = makeConfigDir();
  const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
  expect((await runCli(['login'], { env })).code).toBe(0);
  return {
    emulator,
    configDir,
    env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: emulator.client.clientSecret },
  };
}

async function startProxy(env: Record<string, string>, args: string[] = []) {
  const proxy = startCli(['proxy', '--json', ...args], { env, timeoutMs: 30_000 });
  const [line] = await proxy.waitForStdout(/\{"url":"[^"]+"\}/);
  return { proxy, url: (JSON.parse(line) as { url: string }).url };
}

/** Sends `raw` (a whole HTTP/1.1 request) to `url`'s port; resolves with the status line's code. */
function rawStatus(url: string, raw: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match) {
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on('error', reject);
    setTimeout(() => reject(new Error('no answer')), 5_000).unref();
  });
}

describe('mmauth proxy', () => {
  it("forwards to the profile's API with its token; the program's own Authorization and Cookie never go", async () => {
    const { emulator, configDir, env } = await signedIn();
    const { url } = await startProxy(env);
    const me = await fetch(`${url}/api/me`, { headers: { authorization: 'Bearer mine', cookie: 'a=b' } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as Json).id).toBe(42);
    const sent = emulator.requests.filter((r) => r.url === '/api/me').at(-1);
    const token = (readConfig(configDir) as Json).profiles.default.token.access_token;
    expect(sent?.headers.authorization).toBe(`Bearer ${token}`);
    expect(sent?.headers.cookie).toBeUndefined();
  });

  it('refuses another origin, CONNECT, absolute-form targets, a foreign Host or any Origin, and what --allow-* leaves out', async () => {
    const { emulator, env } = await signedIn();
    const { url } = await startProxy(env, ['--allow-methods', 'GET,HEAD', '--allow-paths', '/api/me']);
    const port = new URL(url).port;
    const before = emulator.requests.length;
    expect(await rawStatus(url, `GET http://evil.example/api/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)).toBe(
      400,
    );
    expect(await rawStatus(url, `CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n`)).toBe(405);
    expect(await rawStatus(url, `GET /api/me HTTP/1.1\r\nHost: evil.example\r\n\r\n`)).toBe(403);
    expect((await fetch(`${url}/api/me`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect((await fetch(`${url}/api/echo`, { method: 'POST', body: 'x' })).status).toBe(403);
    expect((await fetch(`${url}/oauth2/token/info`)).status).toBe(403);
    expect(emulator.requests.length).toBe(before);
    expect((await fetch(`${url}/api/me`)).status).toBe(200);
  });

  it('a 401 from the service (the token ended elsewhere): one renewal, one replay, 200', async () => {
    const { emulator, configDir, env } = await signedIn();
    const { url } = await startProxy(env);
    expect((await fetch(`${url}/api/me`)).status).toBe(200);
    const record = emulator.state.findToken((readConfig(configDir) as Json).profiles.default.token.access_token);
    if (record !== undefined) record.revokedAtMs = Date.now();
    const grants = refreshGrants(emulator);
    const echo = await fetch(`${url}/api/echo`, { method: 'POST', body: 'replayed' });
    expect(echo.status).toBe(200);
    expect(await echo.text()).toContain('replayed');
    expect(refreshGrants(emulator) - grants).toBe(1);
  });
});

describe('mmauth exec --proxy', () => {
  it('a child calling the API every 100 ms for three 2-second lifetimes: every request answered, none 401; no token in its environment or files', async () => {
    const { emulator, configDir, env } = await signedIn(2);
    const script = `const statuses = []; const end = Date.now() + 6000;
      (async () => {
        while (Date.now() < end) {
          statuses.push((await fetch(process.env.MMAUTH_API_URL + '/api/me')).status);
          await new Promise((r) => setTimeout(r, 100));
        }
        const environ = require('node:fs').readFileSync('/proc/' + process.pid + '/environ', 'utf8');
        console.log(JSON.stringify({ statuses, environ, file: process.env.MMAUTH_TOKEN_FILE ?? null }));
      })();`;
    const result = await runCli(['exec', '--proxy', '--', process.execPath, '-e', script], { env, timeoutMs: 20_000 });
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout) as { statuses: number[]; environ: string; file: string | null };
    expect(seen.statuses.length).toBeGreaterThan(40);
    expect(seen.statuses.every((status) => status === 200)).toBe(true);
    expect(seen.file).toBeNull();
    expect(seen.environ).toContain('MMAUTH_API_URL=http://127.0.0.1:');
    expect(seen.environ).not.toContain('MMAUTH_TOKEN');
    const stored = (readConfig(configDir) as Json).profiles.default.token;
    expect(seen.environ).not.toContain(stored.access_token);
    expect(seen.environ).not.toContain(stored.refresh_token);
    expect(refreshGrants(emulator)).toBeGreaterThanOrEqual(2);
  }, 30_000);
});
