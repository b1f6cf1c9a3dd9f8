import { createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/** A TCP listener on 127.0.0.1 that only counts connections (and closes them), closed when the test ends. */
export interface ListeningFixture {
  baseUrl: string;
  connections(): number;
}

/** Starts a ListeningFixture on port 0: a server that must hear nothing. */
export async function startListeningFixture(): Promise<ListeningFixture> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { baseUrl: `http://127.0.0.1:${port}`, connections: () => count };
}
