import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import {
  json,
  makeSelfSignedCertificate,
  startHostileServer,
  type SelfSignedCertificate,
} from '../support/hostile-server.js';

/** A forward proxy on 127.0.0.1: absolute-form HTTP requests and CONNECT tunnels, each recorded. */
async function startProxy(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? '');
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('HTTP_PROXY / HTTPS_PROXY / NO_PROXY (undici EnvHttpProxyAgent)', () => {
  it('HTTP_PROXY carries the requests to an http server; NO_PROXY exempts its host', async () => {
    const emulator = await startTestEmulator();
    const proxy = await startProxy();
    const configDir = makeConfigDir();
    const through = await runCli(['client-credentials', '--no-save', '--json'], {
      env: emulator.env(configDir, { HTTP_PROXY: proxy.url }),
    });
    expect(through.code, through.stderr).toBe(0);
    // undici tunnels plain http through the proxy with CONNECT too.
    expect(proxy.seen).toEqual([`CONNECT ${new URL(emulator.baseUrl).host}`]);
    expect(emulator.requests.map((r) => r.url)).toEqual(['/oauth2/token']);

    const lower = await runCli(['info'], {
      env: emulator.env(configDir, { http_proxy: proxy.url, MMAUTH_TOKEN: JSON.parse(through.stdout).access_token }),
    });
    expect(lower.code, lower.stderr).toBe(0);
    expect(proxy.seen).toHaveLength(2);

    const exempt = await runCli(['client-credentials', '--no-save'], {
      env: emulator.env(configDir, { HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }),
    });
    expect(exempt.code).toBe(0);
    expect(proxy.seen).toHaveLength(2);
  });

  it('a proxy that is down: exit 3, and the hint names the proxy variables', async () => {
    const emulator = await startTestEmulator();
    const result = await runCli(['client-credentials', '--no-save'], {
      env: emulator.env(makeConfigDir(), { HTTP_PROXY: 'http://127.0.0.1:9' }),
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('HTTP_PROXY');
    expect(emulator.requests).toHaveLength(0);
  });

  describe('HTTPS_PROXY tunnels https with CONNECT', () => {
    let tls: SelfSignedCertificate;
    beforeAll(() => {
      tls = makeSelfSignedCertificate();
    });
    afterAll(() => tls.remove());

    it('the token request goes through the tunnel, TLS end to end', async () => {
      const server = await startHostileServer(
        {
          'POST /oauth2/token': json({
            access_token: 'tunnelled-token-0123456789',
            token_type: 'Bearer',
            expires_in: 60,
          }),
        },
        tls,
      );
      const proxy = await startProxy();
      const result = await runCli(
        ['client-credentials', '--no-save', '--json', '--base-url', server.baseUrl, '--client-id', 'c'],
        {
          env: {
            MMAUTH_CONFIG_DIR: makeConfigDir(),
            MMAUTH_CLIENT_SECRET: 'tunnel-secret-0123456789',
            HTTPS_PROXY: proxy.url,
            NODE_EXTRA_CA_CERTS: tls.certFile,
          },
        },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).access_token).toBe('tunnelled-token-0123456789');
      expect(proxy.seen).toEqual([`CONNECT ${new URL(server.baseUrl).host}`]);
      expect(server.requests.map((r) => r.url)).toEqual(['/oauth2/token']);
    });
  });
});
