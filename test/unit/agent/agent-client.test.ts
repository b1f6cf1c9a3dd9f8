/**
 * The agent's client on the wire (agent/agent-client.ts): HTTP/1.1 over node:net, the answer read
 * straight to a callback. Against a raw Unix-socket server of the test's own, which answers as the
 * test scripts it: in pieces, on a kept connection, with bytes nobody asked for, too much.
 */
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tokenFromAgent } from '../../../src/agent/agent-client.js';
import { makeScratchDir } from '../../support/cli.js';

const TOKEN = JSON.stringify({ schema_version: 1, access_token: 'tok-1', token_type: 'bearer', profile: 'default' });

/** An HTTP/1.1 answer with `body` and its Content-Length. */
const answer = (body: string) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** A server on a fresh socket in a private directory; `onRequest` answers each request on its connection. */
async function agentLike(onRequest: (socket: Socket) => void): Promise<{ path: string; connections: () => number }> {
  const path = join(makeScratchDir('mmauth-client-', 0o700), 'agent.sock');
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.on('data', (chunk) => {
      if (chunk.includes('\r\n\r\n')) onRequest(socket);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((done) => server.listen(path, done));
  onTestFinished(() => void server.close());
  return { path, connections: () => connections };
}

describe('tokenFromAgent on the wire', () => {
  it('an answer that arrives in pieces (head, then the body in two parts) is one token', async () => {
    const whole = answer(TOKEN);
    const { path } = await agentLike((socket) => {
      socket.write(whole.slice(0, 30));
      setTimeout(() => socket.write(whole.slice(30, whole.length - 10)), 20);
      setTimeout(() => socket.write(whole.slice(whole.length - 10)), 40);
    });
    expect((await tokenFromAgent(path, undefined, 0, 5_000)).accessToken).toBe('tok-1');
  });

  it('a second request of the process goes on the kept connection', async () => {
    const agent = await agentLike((socket) => socket.write(answer(TOKEN)));
    await tokenFromAgent(agent.path, undefined, 0, 5_000);
    await tokenFromAgent(agent.path, undefined, 0, 5_000);
    expect(agent.connections()).toBe(1);
  });

  it('bytes on a kept connection while no request waits end it; the next request gets its answer on a new one', async () => {
    let requests = 0;
    const agent = await agentLike((socket) => {
      requests += 1;
      // The first answer comes with a second, unasked one a moment later.
      socket.write(answer(TOKEN));
      if (requests === 1) setTimeout(() => socket.write(answer(TOKEN.replace('tok-1', 'unasked'))), 20);
    });
    await tokenFromAgent(agent.path, undefined, 0, 5_000);
    await new Promise((r) => setTimeout(r, 100));
    expect((await tokenFromAgent(agent.path, undefined, 0, 5_000)).accessToken).toBe('tok-1');
    expect(agent.connections()).toBe(2);
  });

  it('an answer over 64 KiB is agent_unreachable (too large), however it arrives', async () => {
    const { path } = await agentLike((socket) => socket.write(answer(`"${'x'.repeat(70 * 1024)}"`)));
    await expect(tokenFromAgent(path, undefined, 0, 5_000)).rejects.toMatchObject({
      code: 'agent_unreachable',
      message: expect.stringContaining('too large') as string,
    });
  });
});
