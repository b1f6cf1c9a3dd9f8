import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CallbackTimeoutError, startCallbackServer } from '../../src/loopback/callback-server.js';
import { InterruptedError } from '../../src/errors.js';

/** A raw GET with a chosen Host header (fetch does not let one set it). */
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

describe('the loopback listener (RFC 8252 §7.3)', () => {
  it('answers only GET on its path with a loopback Host, then closes after the accepted callback', async () => {
    const server = await listener();
    expect(server.redirectUri).toBe(`http://127.0.0.1:${server.port}/callback`);
    const signal = new AbortController().signal;
    const waiting = server.waitForCallback(async (url) => ({ value: url.searchParams.get('code'), page: { isSuccess: true, title: 'ok', detail: '<b>' } }), { timeoutMs: 5000, signal });

    expect((await get(server.port, '/callback?code=x', 'evil.example:80')).status).toBe(400);
    expect((await get(server.port, '/callback?code=x', `attacker.test:${server.port}`)).status).toBe(400);
    expect((await get(server.port, '/other', `127.0.0.1:${server.port}`)).status).toBe(404);
    expect((await get(server.port, '/callback', `127.0.0.1:${server.port}`, 'POST')).status).toBe(405);
    const accepted = await get(server.port, '/callback?code=abc', `localhost:${server.port}`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toContain('&#60;b&#62;');
    expect(accepted.body).not.toContain('<b>');
    await expect(waiting).resolves.toBe('abc');
    await expect(get(server.port, '/callback?code=again', `127.0.0.1:${server.port}`)).rejects.toThrow(/ECONNREFUSED/);
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

  it('closes after a failure too, and a browser\'s spare idle connection does not keep it open', async () => {
    const server = await listener();
    // A connection that never sends a request, as a browser's preconnect does.
    const spare = connect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => spare.once('connect', resolve));
    onTestFinished(() => {
      spare.destroy();
    });
    const waiting = server.waitForCallback(async () => {
      throw new Error('exchange failed');
    }, { timeoutMs: 5000, signal: new AbortController().signal });
    const failed = await get(server.port, '/callback?code=x', `127.0.0.1:${server.port}`);
    expect(failed.body).toContain('exchange failed');
    const startedMs = Date.now();
    await expect(waiting).rejects.toThrow('exchange failed');
    expect(Date.now() - startedMs).toBeLessThan(2000);
    await expect(get(server.port, '/callback', `127.0.0.1:${server.port}`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('rejects with CallbackTimeoutError after timeoutMs and closes', async () => {
    const server = await listener();
    const waiting = server.waitForCallback(async () => ({ value: 1, page: { isSuccess: true, title: '', detail: '' } }), { timeoutMs: 100, signal: new AbortController().signal });
    await expect(waiting).rejects.toBeInstanceOf(CallbackTimeoutError);
    await expect(get(server.port, '/callback', `127.0.0.1:${server.port}`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('rejects with InterruptedError on abort and closes', async () => {
    const server = await listener();
    const controller = new AbortController();
    const waiting = server.waitForCallback(async () => ({ value: 1, page: { isSuccess: true, title: '', detail: '' } }), { timeoutMs: 5000, signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError);
    await expect(get(server.port, '/callback', `127.0.0.1:${server.port}`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a refused callback is answered 400 and waiting goes on', async () => {
    const server = await listener();
    const refusals: string[] = [];
    const waiting = server.waitForCallback(
      async (url) => (url.searchParams.get('state') === 'good' ? { value: 'ok', page: { isSuccess: true, title: '', detail: '' } } : { refusal: 'wrong state' }),
      { timeoutMs: 5000, signal: new AbortController().signal, onRefused: (reason) => refusals.push(reason) },
    );
    const refused = await get(server.port, '/callback?state=bad', `127.0.0.1:${server.port}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('wrong state');
    expect(refusals).toEqual(['wrong state']);
    expect((await get(server.port, '/callback?state=good', `127.0.0.1:${server.port}`)).status).toBe(200);
    await expect(waiting).resolves.toBe('ok');
  });

  it('a failing handler ends the wait with its error and shows it, escaped', async () => {
    const server = await listener();
    const waiting = server.waitForCallback(async () => {
      throw new Error('denied <script>');
    }, { timeoutMs: 5000, signal: new AbortController().signal });
    waiting.catch(() => undefined);
    const page = await get(server.port, '/callback?error=access_denied', `127.0.0.1:${server.port}`);
    expect(page.body).toContain('data-result="error"');
    expect(page.body).toContain('denied &#60;script&#62;');
    await expect(waiting).rejects.toThrow('denied <script>');
  });
});
