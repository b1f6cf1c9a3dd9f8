import type { Server, Socket } from 'node:net';

/** A held connection: requests in flight on it, and since when it has had none (ms, performance.now()). */
interface Slot {
  active: number;
  idleSinceMs: number;
}

/**
 * The slots of `server`'s connections (attack P19): at most `maxConnections` held at once; at the
 * limit, the connection idle longest (no request in flight: an HTTP server's 'request' events say)
 * is closed to make room for the new one, so one program that keeps idle connections open cannot
 * starve another. Returns `admit(socket)`: true when the socket now holds a slot, false when every
 * slot serves a request (close it then).
 */
export function connectionSlots(server: Server, maxConnections: number): (socket: Socket) => boolean {
  const held = new Map<Socket, Slot>();
  server.on('request', (req: { socket: Socket }, res: { once(event: 'close', listener: () => void): unknown }) => {
    const slot = held.get(req.socket);
    if (slot === undefined) return;
    slot.active += 1;
    res.once('close', () => {
      slot.active -= 1;
      slot.idleSinceMs = performance.now();
    });
  });
  return (socket) => {
    if (held.size >= maxConnections) {
      let oldest: [Socket, Slot] | undefined;
      for (const entry of held) {
        if (entry[1].active === 0 && (oldest === undefined || entry[1].idleSinceMs < oldest[1].idleSinceMs))
          oldest = entry;
      }
      if (oldest === undefined) return false;
      held.delete(oldest[0]);
      oldest[0].destroy();
    }
    held.set(socket, { active: 0, idleSinceMs: performance.now() });
    socket.once('close', () => held.delete(socket));
    return true;
  };
}
