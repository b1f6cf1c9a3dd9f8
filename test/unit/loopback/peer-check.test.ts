import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isOwnUserPeer, waitingCap } from '../../../src/loopback/peer-check.js';
import { collectEntries, isOwnUserEntry, type PeerEntry } from '../../../src/loopback/socket-table.js';

const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0
   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 65534        0 222 1 0 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 20 4 30 10 -1
   3: 0100007F:C351 0100007F:1F90 05 00000000:00000000 03:00000ED4 00000000     0        0 0 3 0000000000000000
`;
const entries = (...keys: string[]) => {
  const found = new Map<string, PeerEntry>();
  collectEntries(TABLE, new Set(keys), found);
  return found;
};

describe('the peer check (/proc/net/tcp)', () => {
  it('finds the client end by its ports: local = our remote port, remote = our local port', () => {
    // Our server socket is 127.0.0.1:8080 (0x1F90); the client came from port 50000 (0xC350).
    expect(entries('C350:1F90').get('C350:1F90')).toEqual({ uid: 65534, inode: 222 });
    expect(entries('1F90:C350').get('1F90:C350')).toEqual({ uid: 1000, inode: 333 });
    expect(entries('C352:1F90').size).toBe(0);
  });

  it('another uid is refused, and so is an entry no process holds (a client that sent and closed: uid 0, inode 0)', () => {
    expect(isOwnUserEntry({ uid: 65534, inode: 222 })).toBe(process.getuid?.() === 65534);
    expect(isOwnUserEntry(entries('C351:1F90').get('C351:1F90'))).toBe(false);
    expect(isOwnUserEntry({ uid: process.getuid?.() ?? 0, inode: 5 })).toBe(true);
    expect(isOwnUserEntry(undefined)).toBe(false);
  });

  it('two entries under one key keep the one that admits least', () => {
    const found = new Map<string, PeerEntry>();
    const own = `   0: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 ${process.getuid?.() ?? 0} 0 444 1\n`;
    collectEntries(TABLE + own, new Set(['C350:1F90']), found);
    expect(found.get('C350:1F90')).toEqual({ uid: 65534, inode: 222 });
  });

  it("a real loopback connection of this process is this user's, twenty waiting at once too", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const sockets: Socket[] = [];
    server.on('connection', (socket) => sockets.push(socket));
    const clients = Array.from({ length: 20 }, () => connect(port, '127.0.0.1'));
    await Promise.all(clients.map((client) => new Promise((resolve) => client.once('connect', resolve))));
    while (sockets.length < clients.length) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await Promise.all(sockets.map((socket) => isOwnUserPeer(socket)))).toEqual(sockets.map(() => true));
    for (const socket of [...clients, ...sockets]) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('waitingCap: connections that wait for the peer check', () => {
  it.each([
    ['Max open files            1024                 1024                 files', 128],
    ['Max open files            256                  4096                 files', 64],
    ['Max open files            1048576              1048576              files', 16_384],
    ['', 16_384],
  ])('%s: %i', (limits, cap) => {
    expect(waitingCap(limits)).toBe(cap);
  });
});
