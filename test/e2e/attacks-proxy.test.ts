/**
 * What a program behind `mmauth proxy` (issue 33) may try to get the token out, past `--allow-*`,
 * or to make it renew for nothing, with requests no ordinary client sends (P1–P4, P6). Each case is the attack
 * tried again with the spawned binary against the emulator, through raw requests (fetch would
 * normalise the target first), with a positive control where the attack depends on the server.
 */
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readConfig, refreshGrants, startTestEmulator } from '../support/emulator.js';
import { startGateProxy } from '../support/gate-proxy.js';
import { signIn, startProxy } from '../support/proxy.js';
import { rawGet } from '../support/raw-get.js';

type Json = Record<string, any>;

async function proxied(args: string[] = []) {
  const emulator = await startTestEmulator({ autoApprove: true });
  const { configDir, env } = await signIn(emulator);
  const { port } = await startProxy(env, args);
  const token = (readConfig(configDir) as Json).profiles.default.token.access_token as string;
  return { emulator, configDir, port, token };
}

describe('proxy', () => {
  it('P1: a scheme-relative target (//host:port/…, /\\host:port/…) reaches no other origin: the other server gets no request, no token', async () => {
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(`${req.url} ${String(req.headers.authorization ?? 'none')}`);
      res.end('stolen');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { emulator, port } = await proxied();
      const otherHost = `127.0.0.1:${(other.address() as AddressInfo).port}`;
      for (const target of [
        `//${otherHost}/steal`,
        `/\\${otherHost}/steal`,
        `//localhost:${otherHost.split(':')[1]}/`,
      ]) {
        const before = emulator.requests.length;
        const status = await rawGet(port, target);
        // Forwarded to the profile's origin as a path (the service's 404), or refused: never elsewhere.
        expect([400, 404]).toContain(status);
        expect(emulator.requests.length - before).toBeLessThanOrEqual(1);
      }
      expect(elsewhere).toEqual([]);
    } finally {
      other.close();
    }
  });

  it('P2: dot segments (also %2e-encoded) and backslashes do not take a path past --allow-paths: 400, nothing sent', async () => {
    const { emulator, port, token } = await proxied(['--allow-paths', '/api/me']);
    const escapes = [
      '/api/me/../../oauth2/token/info',
      '/api/me/%2e%2e/%2E%2E/oauth2/token/info',
      '/api/me/.%2e/..%2f../oauth2/token/info',
      '/api/me\\..\\..\\oauth2/token/info',
    ];
    // The control: the service itself resolves such a path, so the proxy is all that stands between.
    expect(
      await rawGet(Number(new URL(emulator.baseUrl).port), escapes[0] ?? '', { authorization: `Bearer ${token}` }),
    ).toBe(200);
    const before = emulator.requests.length;
    for (const target of escapes) expect(await rawGet(port, target)).toBe(400);
    expect(emulator.requests.length).toBe(before);
    // What the list allows still goes through, and a dot inside a name is no dot segment.
    expect(await rawGet(port, '/api/me')).toBe(200);
    expect(await rawGet(port, '/api/me.json')).not.toBe(400);
  });

  it('P3: a method override (X-HTTP-Method-Override, a _method form field) does not take a POST past --allow-methods: 403, nothing sent', async () => {
    // Rack::MethodOverride, in front of every Rails app, turns a POST with either into the method they name.
    const { emulator, port } = await proxied(['--allow-methods', 'GET,POST']);
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`http://127.0.0.1:${port}/api/echo`, { method: 'POST', headers, body });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const before = emulator.requests.length;
    expect((await post({ 'x-http-method-override': 'DELETE' }, '{}')).status).toBe(403);
    expect((await post({ 'x-http-method': 'put' }, '{}')).status).toBe(403);
    expect((await post(form, 'name=x&_method=delete')).status).toBe(403);
    const multipart = new FormData();
    multipart.set('_method', 'DELETE');
    const refused = await fetch(`http://127.0.0.1:${port}/api/echo`, { method: 'POST', body: multipart });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error).toBe('method_not_allowed');
    expect(emulator.requests.length).toBe(before);
    // An override to an allowed method, and a form without one, go through.
    expect((await post({ 'x-http-method-override': 'GET' }, '{}')).status).toBe(200);
    expect((await post(form, 'name=x')).status).toBe(200);
    expect(emulator.requests.length).toBe(before + 2);
  });

  it('P4: a program that keeps drawing 401s that are not about the token (bad client credentials at /oauth2/token) gets one renewal, not one per request; a token really ended still renews', async () => {
    const { emulator, configDir, port } = await proxied();
    const grants = refreshGrants(emulator);
    const badClient = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'x', client_secret: 'wrong' });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/oauth2/token`, { method: 'POST', body: badClient });
      statuses.push(answer.status);
      await answer.arrayBuffer();
    }
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(refreshGrants(emulator) - grants).toBe(1);
    // Sent once each, and once more after the one renewal: no replay with the same token.
    const sentOn = emulator.requests.filter((r) => new URLSearchParams(r.body).get('client_id') === 'x');
    expect(sentOn).toHaveLength(21);
    // Within the same minute, a token the service really ended (token info says so) is renewed at once.
    const record = emulator.state.findToken((readConfig(configDir) as Json).profiles.default.token.access_token);
    if (record !== undefined) record.revokedAtMs = Date.now();
    expect((await fetch(`http://127.0.0.1:${port}/api/me`)).status).toBe(200);
    expect(refreshGrants(emulator) - grants).toBe(2);
  });

  it('P6: TRACE and TRACK, which a server that honours them answers with the request itself, Authorization included, are refused: 405, nothing sent', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const gate = await startGateProxy(emulator.baseUrl);
    gate.set('TRACE', 'echo');
    gate.set('TRACK', 'echo');
    const { env } = await signIn(emulator, gate.baseUrl);
    const { port } = await startProxy(env);
    // The control: the server in front of the service echoes what TRACE sent, a bearer token included.
    const echoed = await fetchRaw(Number(new URL(gate.baseUrl).port), 'TRACE', { authorization: 'Bearer seen' });
    expect(echoed).toContain('Bearer seen');
    const before = gate.seen.length;
    for (const method of ['TRACE', 'TRACK', 'trace']) {
      const answer = await fetchRaw(port, method);
      // Node's parser turns away the methods it does not know itself (TRACK, lower case: 400); the proxy, TRACE (405).
      expect(answer).toMatch(method === 'TRACE' ? /^HTTP\/1\.1 405 / : /^HTTP\/1\.1 400 /);
      expect(answer).not.toContain('Bearer');
    }
    expect(gate.seen.length).toBe(before);
  });
});

/** A raw request with any method (fetch refuses TRACE and TRACK); resolves with the whole answer as text. */
function fetchRaw(port: number, method: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const fields = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', ...headers });
      socket.write(
        `${method} / HTTP/1.1\r\n${fields.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`,
      );
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer in 5 s')));
  });
}
