import { request, createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { capConnections } from '../../../src/loopback/peer-check.js';

/** An HTTP server capped at `max` connections whose handler answers after `delayMs`. */
async function server(max: number, delayMs = 0): Promise<number> {
  const created = capConnections(
    createServer((_req, res) => setTimeout(() => res.end('ok'), delayMs)),
    max,
  );
  await new Promise<void>((done) => created.listen(0, '127.0.0.1', done));
  onTestFinished(() => {
    created.closeAllConnections();
    created.close();
  });
  return (created.address() as AddressInfo).port;
}

const opened = (port: number) =>
  new Promise<Socket>((done) => {
    const socket = connect(port, '127.0.0.1', () => done(socket));
    socket.on('error', () => undefined);
    onTestFinished(() => void socket.destroy());
  });
const closed = (socket: Socket) => new Promise<void>((done) => socket.once('close', () => done()));
const get = (port: number) =>
  new Promise<number>((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', () => done(0));
    req.end();
  });

describe('connection slots: at the limit, the connection idle longest makes room', () => {
  it('a new connection closes the oldest idle one, not a newer one', async () => {
    const port = await server(2);
    const first = await opened(port);
    await new Promise((done) => setTimeout(done, 20));
    const second = await opened(port);
    let isSecondClosed = false;
    second.once('close', () => (isSecondClosed = true));
    const firstClosed = closed(first);
    expect(await get(port)).toBe(200);
    await firstClosed;
    expect(isSecondClosed).toBe(false);
  });

  it('a connection whose request is being served is never the one closed: with every slot busy, the new one is', async () => {
    const port = await server(1, 500);
    const busy = get(port);
    await new Promise((done) => setTimeout(done, 100));
    expect(await get(port)).toBe(0);
    expect(await busy).toBe(200);
  });
});
