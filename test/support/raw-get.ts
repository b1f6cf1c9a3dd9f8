import { request } from 'node:http';

/**
 * A raw GET to 127.0.0.1:`port` with the request target and headers as given (fetch would
 * normalise the target and set its own Host); resolves with the status.
 */
export function rawGet(port: number, target: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: target, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
