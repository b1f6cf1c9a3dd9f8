import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isOwnUserPeer, peerUid } from '../../../src/loopback/peer-check.js';

const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0
   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 65534        0 222 1 0 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 20 4 30 10 -1
`;
const fake = (text: string | undefined) => (path: string, find: (text: string) => unknown) =>
  (path.endsWith('tcp') && text !== undefined ? find(text) : undefined) as never;

describe('peerUid (/proc/net/tcp)', () => {
  it('finds the client end by its ports: local = our remote port, remote = our local port', () => {
    // Our server socket is 127.0.0.1:8080 (0x1F90); the client came from port 50000 (0xC350).
    expect(peerUid({ localPort: 8080, remotePort: 50000 }, fake(TABLE))).toBe(65534);
    expect(peerUid({ localPort: 50000, remotePort: 8080 }, fake(TABLE))).toBe(1000);
    expect(peerUid({ localPort: 8080, remotePort: 50001 }, fake(TABLE))).toBeUndefined();
  });

  it('another uid is refused; a socket the table does not list is refused where the table exists', () => {
    expect(isOwnUserPeer({ localPort: 8080, remotePort: 50000 }, fake(TABLE))).toBe(process.getuid?.() === 65534);
    expect(isOwnUserPeer({ localPort: 8080, remotePort: 50001 }, fake(TABLE))).toBe(false);
  });

  it("a real loopback connection of this process is this user's", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const client = connect(port, '127.0.0.1');
    const socket = await accepted;
    expect(peerUid(socket)).toBe(process.getuid?.());
    expect(isOwnUserPeer(socket)).toBe(true);
    client.destroy();
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});
