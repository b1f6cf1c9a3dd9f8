/**
 * `mmauth proxy` and `exec --proxy` (issue 33): a program calls the service's API through
 * 127.0.0.1 and never holds a token. The spawned binary against the emulator; raw sockets for the
 * requests a well-behaved client would never send.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { readConfig, startTestEmulator, refreshGrants } from '../support/emulator.js';
import { signIn, startProxy } from '../support/proxy.js';

type Json = Record<string, any>;

async function signedIn(tokenTtlS = 7200) {
  const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5', tokenTtlS });
  return { emulator, ...(await signIn(emulator)) };
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

  it('a redirect off the origin comes back to the program unfollowed: the other origin gets no request, no token', async () => {
    const { emulator, env } = await signedIn();
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(String(req.headers.authorization ?? 'none'));
      res.end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { url } = await startProxy(env);
      const callback = `http://127.0.0.1:${(other.address() as AddressInfo).port}/callback`;
      // The auto-approving authorize endpoint answers 302 to the redirect URI: another origin.
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: emulator.client.clientId,
        redirect_uri: callback,
        scope: 'service',
        state: 's',
      });
      const answer = await fetch(`${url}/oauth2/authorize?${query}`, { redirect: 'manual' });
      expect(answer.status).toBe(302);
      expect(answer.headers.get('location')).toMatch(new RegExp(`^${callback}\\?`));
      expect(elsewhere).toEqual([]);
    } finally {
      other.close();
    }
  });

  it("the service's Set-Cookie does not come back: the program holds no credential of the service's", async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const cliEnv = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env: cliEnv })).code).toBe(0);
    const { url } = await startProxy({
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    });
    // The consent page sets the browser session's cookie (the control: sent directly, it is there).
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: emulator.client.clientId,
      redirect_uri: 'http://127.0.0.1:9/callback',
      scope: 'service',
      state: 's',
    });
    expect((await fetch(`${emulator.baseUrl}/oauth2/authorize?${query}`)).headers.get('set-cookie')).not.toBeNull();
    const proxied = await fetch(`${url}/oauth2/authorize?${query}`);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get('set-cookie')).toBeNull();
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
  // Three lifetimes of 4-second tokens (the run), and of 10-second tokens from the family's
  // model (doorkeeper5: rotating refresh tokens, the old access token ended on first use of the new).
  it.each([4, 10])(
    'a child calling the API every 100 ms for three %i-second lifetimes: every request answered, none 401; no token in its environment, files or memory',
    async (ttlS) => {
      const { emulator, configDir, env } = await signedIn(ttlS);
      const heap = join(configDir, '..', `child-${ttlS}.heapsnapshot`);
      const script = `const statuses = []; const end = Date.now() + ${ttlS * 3 * 1000 + 500};
      (async () => {
        while (Date.now() < end) {
          statuses.push((await fetch(process.env.MMAUTH_API_URL + '/api/me')).status);
          await new Promise((r) => setTimeout(r, 100));
        }
        const environ = require('node:fs').readFileSync('/proc/' + process.pid + '/environ', 'utf8');
        const files = require('node:fs').readdirSync('/proc/' + process.pid + '/fd').map((fd) => { try { return require('node:fs').readlinkSync('/proc/' + process.pid + '/fd/' + fd); } catch { return ''; } });
        require('node:v8').writeHeapSnapshot(${JSON.stringify(heap)});
        console.log(JSON.stringify({ statuses, environ, files, file: process.env.MMAUTH_TOKEN_FILE ?? null }));
      })();`;
      const result = await runCli(['exec', '--proxy', '--', process.execPath, '-e', script], {
        env,
        timeoutMs: ttlS * 3 * 1000 + 20_000,
      });
      expect(result.code, result.stderr).toBe(0);
      const seen = JSON.parse(result.stdout) as {
        statuses: number[];
        environ: string;
        files: string[];
        file: string | null;
      };
      // It kept calling through the three lifetimes (two a second at least, whatever the machine's load;
      // seven a second on a quiet one); what must hold is that none of them failed.
      expect(seen.statuses.length).toBeGreaterThan(ttlS * 3 * 2);
      expect(seen.statuses.filter((status) => status !== 200)).toEqual([]);
      expect(seen.file).toBeNull();
      // Files the child holds: none of mmauth's (Node 24 may still be reading the CA bundle that
      // NODE_EXTRA_CA_CERTS names, on a thread of its own: that one is Node's, not a token).
      const caBundle = env.NODE_EXTRA_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS;
      const held = seen.files.filter((path) => path.startsWith('/') && !path.startsWith('/dev/') && path !== caBundle);
      expect(held).toEqual([]);
      expect(seen.environ).toContain('MMAUTH_API_URL=http://127.0.0.1:');
      expect(seen.environ).not.toContain('MMAUTH_TOKEN');
      // Every access token the service saw during the run, and the stored pair: none in the child's environment or heap.
      const presented = new Set(
        emulator.requests.flatMap((r) => /^Bearer (.+)$/.exec(String(r.headers.authorization ?? ''))?.[1] ?? []),
      );
      expect(presented.size).toBeGreaterThanOrEqual(4);
      const memory = readFileSync(heap, 'utf8');
      // The control: what the child did hold (the proxy's origin, which its HTTP client keeps) is in the snapshot.
      const apiUrl = /MMAUTH_API_URL=(\S+?)\0/.exec(seen.environ)?.[1] ?? 'http://missing/missing';
      expect(memory).toContain(new URL(apiUrl).origin);
      const stored = (readConfig(configDir) as Json).profiles.default.token;
      for (const token of [stored.access_token, stored.refresh_token, ...presented]) {
        expect(seen.environ).not.toContain(token);
        expect(memory.includes(token)).toBe(false);
      }
      expect(refreshGrants(emulator)).toBeGreaterThanOrEqual(3);
    },
    60_000,
  );
});
