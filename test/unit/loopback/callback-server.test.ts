import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startCallbackServer } from '../../../src/loopback/callback-server.js';
import { rejectedBy } from '../../support/failure.js';

/** A raw request with a chosen Host header and target (fetch lets one set neither). */
function get(port: number, path: string, host: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listener() {
  const server = await startCallbackServer({ port: 0, path: '/callback' });
  onTestFinished(() => server.close());
  return server;
}

const never = new AbortController().signal;

describe('the loopback listener (RFC 8252 §7.3)', () => {
  it('hands over only GET on its path with a loopback Host; the page it is told to show is escaped', async () => {
    const server = await listener();
    expect(server.redirectUri).toBe(`http://127.0.0.1:${server.port}/callback`);
    expect((await get(server.port, '/callback?code=x', 'evil.example:80')).status).toBe(400);
    expect((await get(server.port, '/callback?code=x', `attacker.test:${server.port}`)).status).toBe(400);
    expect((await get(server.port, '/other', `127.0.0.1:${server.port}`)).status).toBe(404);
    expect((await get(server.port, '/callback', `127.0.0.1:${server.port}`, 'POST')).status).toBe(405);
    const answered = get(server.port, '/callback?code=abc', `localhost:${server.port}`);
    const incoming = await server.next(never);
    expect(incoming.url.searchParams.get('code')).toBe('abc');
    incoming.respond({ isSuccess: true, title: 'ok', detail: '<b>' });
    const page = await answered;
    expect(page.status).toBe(200);
    expect(page.body).toContain('&#60;b&#62;');
    expect(page.body).not.toContain('<b>');
    await server.close();
    // Closed: nothing answers there (refused, or reset under load; never this listener).
    await expect(get(server.port, '/callback?code=again', `127.0.0.1:${server.port}`)).rejects.toThrow();
  });

  it('answers 400 to a request target it cannot parse and keeps serving (one request never ends a login)', async () => {
    const server = await listener();
    expect((await get(server.port, '//a:99999/', `127.0.0.1:${server.port}`)).status).toBe(400);
    const answered = get(server.port, '/callback?code=after', `127.0.0.1:${server.port}`);
    const incoming = await server.next(never);
    incoming.respond({ isSuccess: true, title: 'ok', detail: '' });
    expect((await answered).status).toBe(200);
    expect(incoming.url.searchParams.get('code')).toBe('after');
  });

  it('binds 127.0.0.1 only: another loopback address and ::1 are refused', async () => {
    const server = await listener();
    const connectTo = (host: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host, port: server.port });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
    expect(await connectTo('127.0.0.1')).toBe('connected');
    expect(await connectTo('127.0.0.2')).toBe('ECONNREFUSED');
    expect(await connectTo('::1')).toMatch(/ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH/);
  });

  it("closes at once after a failure page, although a browser's spare idle connection is open", async () => {
    const server = await listener();
    // A connection that never sends a request, as a browser's preconnect does.
    const spare = connect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => spare.once('connect', resolve));
    onTestFinished(() => {
      spare.destroy();
    });
    const answered = get(server.port, '/callback?code=x', `127.0.0.1:${server.port}`);
    (await server.next(never)).respond({ isSuccess: false, title: 'Sign-in failed', detail: 'exchange failed' });
    expect((await answered).body).toContain('exchange failed');
    const startedMs = Date.now();
    await server.close();
    expect(Date.now() - startedMs).toBeLessThan(2000);
    await expect(get(server.port, '/callback', `127.0.0.1:${server.port}`)).rejects.toThrow();
  });

  it('a refused response is answered 400; a second response while one is unanswered gets 409', async () => {
    const server = await listener();
    const first = get(server.port, '/callback?state=bad', `127.0.0.1:${server.port}`);
    const incoming = await server.next(never);
    expect((await get(server.port, '/callback?state=other', `127.0.0.1:${server.port}`)).status).toBe(409);
    incoming.refuse('wrong state');
    const refused = await first;
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('wrong state');
    const second = get(server.port, '/callback?state=good', `127.0.0.1:${server.port}`);
    (await server.next(never)).respond({ isSuccess: true, title: '', detail: '' });
    expect((await second).status).toBe(200);
  });

  it('next() rejects with `interrupted` when its signal aborts', async () => {
    const server = await listener();
    const controller = new AbortController();
    const waiting = rejectedBy(() => server.next(controller.signal));
    controller.abort();
    expect((await waiting).code).toBe('interrupted');
  });
});

describe('a localhost redirect URI (RFC 8252 §8.3; A7)', () => {
  it('listens on [::1] as well as 127.0.0.1, so no other local user can take the address a browser tries first', async () => {
    // A fixed port is needed: one found free a moment ago may be taken meanwhile (other tests run
    // beside this one), so a few tries, each with a port just found free.
    let server: Awaited<ReturnType<typeof startCallbackServer>> | undefined;
    let port = 0;
    for (let attempt = 0; attempt < 5 && server === undefined; attempt++) {
      const probe = await startCallbackServer({ port: 0, path: '/callback' });
      port = probe.port;
      await probe.close();
      server = await startCallbackServer({ port, path: '/callback', isLocalhost: true }).catch(() => undefined);
    }
    if (server === undefined) throw new Error('no port was free on both 127.0.0.1 and [::1] in 5 tries');
    const started = server;
    onTestFinished(() => started.close());
    expect(server.redirectUri).toBe(`http://localhost:${port}/callback`);
    const viaV6 = new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '::1', port, path: '/callback?code=v6', headers: { host: `localhost:${port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const incoming = await server.next(never);
    expect(incoming.url.searchParams.get('code')).toBe('v6');
    incoming.respond({ isSuccess: true, title: 'ok', detail: '' });
    expect(await viaV6).toBe(200);
  });

  it('refuses to start when [::1] on that port is taken by someone else', async () => {
    const { createServer } = await import('node:net');
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '::1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => squatter.close(() => resolve())));
    const port = (squatter.address() as { port: number }).port;
    const error = await rejectedBy(() => startCallbackServer({ port, path: '/callback', isLocalhost: true }));
    expect(error.code).toBe('port_in_use');
    expect(error.message).toBe(`port ${port} on [::1] is in use`);
  });
});
