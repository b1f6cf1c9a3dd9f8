/**
 * What a program can do to the proxy's connections and address (P19, P22), and the Unix socket
 * that no other user can reach (decision 45): each case tried again with the spawned binary.
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { signIn, startProxy } from '../support/proxy.js';
import { rawGet } from '../support/raw-get.js';
import { until } from '../support/until.js';

const run = promisify(execFile);

/** Opens `count` connections to 127.0.0.1:`port` that send nothing; each records when the other end closed it. */
async function idleConnections(port: number, count: number): Promise<{ sockets: Socket[]; closed: () => number }> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => resolve(socket));
          socket.on('error', reject);
          socket.on('close', () => (closed += 1));
        }),
    ),
  );
  onTestFinished(() => sockets.forEach((socket) => socket.destroy()));
  return { sockets, closed: () => closed };
}

/** Where a connection goes: a TCP port on 127.0.0.1 or a Unix socket's path. */
type Address = { port: number } | { path: string };

/**
 * A program that keeps `count` idle connections to `address` open and re-opens each one the other
 * end closes (attack P19), until the test ends.
 */
function holdIdle(address: Address, count: number): void {
  let isDone = false;
  const open = (): void => {
    if (isDone) return;
    const socket = 'port' in address ? connect(address.port, '127.0.0.1') : connect(address.path);
    socket.on('error', () => undefined);
    socket.on('close', () => setTimeout(open, 5));
    sockets.add(socket);
  };
  const sockets = new Set<Socket>();
  for (let i = 0; i < count; i++) open();
  onTestFinished(() => {
    isDone = true;
    for (const socket of sockets) socket.destroy();
  });
}

/** A GET of /api/me on a new connection to `address`: true when it answers 200 within 1.5 s. */
function isAnswered(address: Address): Promise<boolean> {
  return new Promise((done) => {
    const target = 'port' in address ? { host: '127.0.0.1', port: address.port } : { socketPath: address.path };
    const req = httpRequest({ ...target, path: '/api/me', agent: false, timeout: 1_500 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

describe('proxy connections and address', () => {
  it('P19: beside a program that re-opens 70 idle connections, another that asks every 2 s gets at least 6 of 8 answers, on TCP and on the Unix socket (the connection idle longest makes room)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { proxy, port } = await startProxy((await signIn(emulator)).env, [], 60_000);
    const { socket } = JSON.parse(proxy.stdout().trim().split('\n')[0] ?? '{}') as { socket: string };
    const answered = await Promise.all(
      [{ port }, { path: socket }].map(async (address) => {
        holdIdle(address, 70);
        await new Promise((done) => setTimeout(done, 1_000));
        let count = 0;
        for (let i = 0; i < 8; i++) {
          if (await isAnswered(address)) count += 1;
          await new Promise((done) => setTimeout(done, 2_000));
        }
        return count;
      }),
    );
    expect(answered[0], 'TCP').toBeGreaterThanOrEqual(6);
    expect(answered[1], 'Unix socket').toBeGreaterThanOrEqual(6);
  }, 60_000);

  it('P19: 70 idle connections held by one program are closed by the proxy within seconds, and another program is then served', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { port } = await startProxy((await signIn(emulator)).env);
    const idle = await idleConnections(port, 70);
    // What must hold: every idle connection is closed by the proxy (5 s idle limit; bound generous for a loaded machine).
    await until(() => idle.closed() === 70, 25_000, 'the proxy closed all 70 idle connections', 100);
    expect(await rawGet(port, '/api/me')).toBe(200);
  }, 40_000);

  it("P22: a --port another program holds is the proxy's own error (exit 1, port_in_use) naming --port 0 and the Unix socket, not a login's hint", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await signIn(emulator);
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => void holder.close());
    const taken = (holder.address() as AddressInfo).port;
    const result = await runCli(['proxy', '--port', String(taken)], { env });
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr).toContain(`port ${taken} on 127.0.0.1 is in use`);
    expect(result.stderr).toContain('--port 0');
    expect(result.stderr).toContain('Unix socket');
    expect(result.stderr).not.toContain('--redirect-uri');
  });

  it('the proxy also serves on a Unix socket in a private 0700 directory: any Host there, still no web page; removed when it stops', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { proxy } = await startProxy((await signIn(emulator)).env);
    const { socket } = JSON.parse(proxy.stdout().trim().split('\n')[0] ?? '{}') as { socket: string };
    expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
    // Asynchronously: the emulator answers in this process.
    const curl = async (...args: string[]) =>
      (
        await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--unix-socket', socket, ...args], {
          encoding: 'utf8',
          timeout: 10_000,
        })
      ).stdout;
    expect(await curl('http://localhost/api/me')).toBe('200');
    expect(await curl('-H', 'Host: anything.example', 'http://x/api/me')).toBe('200');
    expect(await curl('-H', 'Origin: https://evil.example', 'http://localhost/api/me')).toBe('403');
    proxy.child.kill('SIGINT');
    await proxy.done;
    expect(() => statSync(dirname(socket))).toThrow();
  });

  it('the banner names the profile and its server, the address and the socket', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await signIn(emulator);
    const proxy = startCli(['proxy'], { env, timeoutMs: 20_000 });
    const [banner] = await proxy.waitForStderr(/Serving .*\(Ctrl-C stops\)/);
    expect(banner).toContain(`Serving ${emulator.baseUrl} with profile "default"'s token on http://127.0.0.1:`);
    expect(banner).toMatch(/on the Unix socket \/\S+\/api\.sock/);
  });

  it('exec --proxy hands the child MMAUTH_API_SOCKET beside MMAUTH_API_URL; curl reaches the API through either', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await signIn(emulator);
    const script =
      'curl -s -o /dev/null -w "%{http_code} " "$MMAUTH_API_URL/api/me"; ' +
      'curl -s -o /dev/null -w "%{http_code} " --unix-socket "$MMAUTH_API_SOCKET" http://localhost/api/me; ' +
      'test -S "$MMAUTH_API_SOCKET" && echo socket';
    const result = await runCli(['exec', '--proxy', '--', 'sh', '-c', script], {
      env: { ...env, PATH: process.env.PATH },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('200 200 socket');
  });
});
