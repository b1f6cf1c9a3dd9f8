/**
 * What a program behind `mmauth proxy` may do with the request's framing and the names a server
 * maps (P8, P10, P11, P12): each case is the attack tried again with the spawned binary, through raw
 * sockets (fetch frames requests itself), against a keep-alive Node server (the gate) and against
 * puma with Rack, the service family's own stack.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { startGateProxy } from '../support/gate-proxy.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';
import { signIn, startProxy } from '../support/proxy.js';
import { startRackServer } from '../support/puma.js';
import { rawGet } from '../support/raw-get.js';

/** Whether `answer` holds at least one whole HTTP/1.1 answer (its head, and its body by Content-Length or chunks). */
function isWholeAnswer(answer: string): boolean {
  const headEnd = answer.indexOf('\r\n\r\n');
  if (headEnd === -1) return false;
  const head = answer.slice(0, headEnd);
  const body = answer.slice(headEnd + 4);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return body.includes('0\r\n\r\n');
  return body.length >= Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
}

/**
 * Writes `request` to 127.0.0.1:`port` as given and resolves with all that came back: until the
 * connection closes, or `quietMs` after a whole answer came (a second answer, a smuggled request's,
 * would follow at once); bounded by 20 s, so that a loaded machine's slow answer is waited for.
 */
function rawExchange(port: number, request: string, quietMs = 500): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const end = () => {
      socket.destroy();
      resolve(answer);
    };
    let timer = setTimeout(end, 20_000);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!isWholeAnswer(answer)) return;
      clearTimeout(timer);
      timer = setTimeout(end, quietMs);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.write(request);
  });
}

/** A GET whose chunked body is a whole second request, its Content-Length longer than its body. */
function smugglingGet(port: number, smuggledPath: string): string {
  const inner = `POST ${smuggledPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 400\r\n\r\nstolen=`;
  return (
    `GET /api/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n\r\n` +
    `${inner.length.toString(16)}\r\n${inner}\r\n0\r\n\r\n`
  );
}

/** A profile whose base URL is puma's, holding a fresh token (no network needed to hand it out). */
async function proxiedRack(args: string[] = []) {
  const rack = await startRackServer();
  const configDir = makeConfigDir();
  const accessToken = `rack-${'t'.repeat(40)}`;
  writeProfiles(configDir, {
    default: { base_url: rack.baseUrl, client_id: 'app', token: storedToken(accessToken, inS(3600)) },
  });
  const { port } = await startProxy({ MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' }, args);
  return { rack, port, accessToken };
}

describe('P8: request smuggling through the proxy', () => {
  it("a GET whose chunked body is a second request: a keep-alive Node server sees one request, and the next request (with the token) is nobody's body", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const gate = await startGateProxy(emulator.baseUrl);
    const { env } = await signIn(emulator, gate.baseUrl);
    const { port } = await startProxy(env);
    const answer = await rawExchange(port, smugglingGet(port, '/oauth2/token?smuggled=1'));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    // What follows on the proxy's kept connections is answered as itself.
    expect(await rawGet(port, '/api/me')).toBe(200);
    expect(await rawGet(port, '/api/me')).toBe(200);
    expect(gate.seen.filter((line) => line.includes('smuggled'))).toEqual([]);
    expect(gate.seen.filter((line) => line.startsWith('GET /api/me'))).toHaveLength(2);
  });

  it('a chunked POST is sent on with framing the proxy sets: puma (Rack) sees one request with the whole body, and the next request on the connection is its own', async () => {
    const { rack, port, accessToken } = await proxiedRack();
    const inner = `POST /steal HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\n`;
    const chunked =
      `POST /api/notes HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n` +
      `${inner.length.toString(16)}\r\n${inner}\r\n0\r\n\r\n`;
    expect(await rawExchange(port, chunked)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await rawGet(port, '/api/after')).toBe(200);
    const seen = await rack.seen();
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/notes', 'GET /api/after']);
    expect(seen[0]?.body).toBe(inner);
    expect(seen.every((r) => r.authorization === `Bearer ${accessToken}`)).toBe(true);
  });

  it('a GET or HEAD with a body (chunked or sized) is refused with 400 before anything is sent; a DELETE body is framed', async () => {
    const { rack, port } = await proxiedRack();
    const host = `Host: 127.0.0.1:${port}`;
    expect(await rawExchange(port, smugglingGet(port, '/steal'))).toMatch(/^HTTP\/1\.1 400 /);
    expect(await rawExchange(port, `GET /api/me HTTP/1.1\r\n${host}\r\nContent-Length: 4\r\n\r\nabcd`)).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    expect(await rawExchange(port, `HEAD /api/me HTTP/1.1\r\n${host}\r\nContent-Length: 4\r\n\r\nabcd`)).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    const deleteBody = 'GET /steal HTTP/1.1\r\nHost: x\r\n\r\n';
    expect(
      await rawExchange(
        port,
        `DELETE /api/notes/1 HTTP/1.1\r\n${host}\r\nTransfer-Encoding: chunked\r\n\r\n${deleteBody.length.toString(16)}\r\n${deleteBody}\r\n0\r\n\r\n`,
      ),
    ).toMatch(/^HTTP\/1\.1 200 /);
    expect(await rawGet(port, '/api/after')).toBe(200);
    const seen = await rack.seen();
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /api/notes/1', 'GET /api/after']);
    expect(seen[0]?.body).toBe(deleteBody);
  });
});

describe('P10: method overrides Rack honours', () => {
  it('X_HTTP_METHOD_OVERRIDE (underscores) and a _method field in a body without a media type do not take a POST past --allow-methods GET,POST under puma: 403, Rack sees nothing', async () => {
    const { rack, port } = await proxiedRack(['--allow-methods', 'GET,POST']);
    const host = `Host: 127.0.0.1:${port}`;
    const post = (headers: string, body: string) =>
      rawExchange(
        port,
        `POST /api/notes HTTP/1.1\r\n${host}\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`,
      );
    expect(await post('X_HTTP_METHOD_OVERRIDE: DELETE\r\n', '{}')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await post('x_http_method: PUT\r\n', '{}')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await post('', '_method=DELETE')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await post('Content-Type: ;charset=utf-8\r\n', '_method=DELETE')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await rack.seen()).toEqual([]);
    // What Rack would not turn into another method still goes through, as POST.
    expect(await post('Content-Type: application/json\r\n', '{"_method":"DELETE"}')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await post('', 'name=x')).toMatch(/^HTTP\/1\.1 200 /);
    expect((await rack.seen()).map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('control: the same requests sent to puma directly reach the app as DELETE and PUT', async () => {
    const rack = await startRackServer();
    const port = Number(new URL(rack.baseUrl).port);
    const post = (headers: string, body: string) =>
      rawExchange(
        port,
        `POST /api/notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`,
      );
    await post('X_HTTP_METHOD_OVERRIDE: DELETE\r\n', '{}');
    await post('', '_method=PUT');
    expect((await rack.seen()).map((r) => r.method)).toEqual(['DELETE', 'PUT']);
  });
});

describe('P11, P12: --allow-paths matches whole segments', () => {
  it('/api/maps admits /api/maps and /api/maps/…, never /api/maps-admin or /api/mapsecret', async () => {
    const { rack, port } = await proxiedRack(['--allow-paths', '/api/maps']);
    for (const path of ['/api/maps-admin', '/api/mapsecret', '/api/maps.json', '/api/map']) {
      expect(await rawGet(port, path), path).toBe(403);
    }
    for (const path of ['/api/maps', '/api/maps/', '/api/maps/1', '/api/maps?page=2']) {
      expect(await rawGet(port, path), path).toBe(200);
    }
    expect((await rack.seen()).map((r) => r.path)).toEqual(['/api/maps', '/api/maps/', '/api/maps/1', '/api/maps']);
  });

  it.each([
    ['..;', '/api/maps/..;/oauth2/token'],
    ['.;', '/api/maps/.;/x'],
    ['%252e%252e', '/api/maps/%252e%252e/oauth2/token'],
    ['%252f', '/api/maps%252f..%252foauth2'],
    ['overlong dot %c0%ae', '/api/maps/%c0%ae%c0%ae/oauth2/token'],
    ['fullwidth dot %ef%bc%8e', '/api/maps/%ef%bc%8e%ef%bc%8e/oauth2/token'],
    ['one-dot leader %e2%80%a4', '/api/maps/%e2%80%a4%e2%80%a4/oauth2/token'],
    ['P12 NUL after a dot segment', '/api/maps/..%00/admin'],
    ['P12 NUL before a dot segment', '/api/maps/%00/../admin'],
    ['P12 NUL in a segment', '/api/maps%00/x'],
    ['P12 double-encoded NUL', '/api/maps/%2500/x'],
  ])('an ambiguous segment (%s) is refused with 400 ambiguous_path, nothing sent', async (_name, target) => {
    const { rack, port } = await proxiedRack(['--allow-paths', '/api/maps']);
    expect(await rawGet(port, target)).toBe(400);
    expect(await rack.seen()).toEqual([]);
  });

  it.each([[['--allow-paths=']], [['--allow-paths', 'api/maps']], [['--allow-paths', '/api/maps', '']]])(
    '%j is a usage error (exit 2) before the proxy starts',
    async (args) => {
      const configDir = makeConfigDir();
      writeProfiles(configDir, {
        default: { base_url: 'http://127.0.0.1:9', client_id: 'app', token: storedToken('t'.repeat(40), inS(3600)) },
      });
      const result = await runCli(['proxy', ...args], {
        env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' },
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('--allow-paths');
    },
  );
});
