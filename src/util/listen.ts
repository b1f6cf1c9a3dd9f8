import type { Server } from 'node:net';
import { MmauthError } from '../errors.js';

/**
 * Starts `server` listening on `host` (a loopback address) and `port` (0: ephemeral). Throws
 * MmauthError `port_in_use` (EADDRINUSE), `port_not_allowed` (EACCES) or `listener_failed`, each
 * with `details.port`.
 */
export function listenOnLoopback(server: Server, port: number, host = '127.0.0.1'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const details = { port: String(port) };
      if (error.code === 'EADDRINUSE') {
        const where = host.includes(':') ? `[${host}]` : host;
        reject(new MmauthError('port_in_use', `port ${port} on ${where} is in use`, { cause: error, details }));
      } else if (error.code === 'EACCES') {
        reject(new MmauthError('port_not_allowed', `not allowed to listen on port ${port}`, { cause: error, details }));
      } else {
        reject(
          new MmauthError('listener_failed', `cannot listen on ${host}:${port}: ${error.message}`, {
            cause: error,
            details,
          }),
        );
      }
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
