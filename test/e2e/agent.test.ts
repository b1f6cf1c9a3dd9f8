/**
 * `mmauth agent` (a token agent on a Unix socket, ssh-agent's pattern): started in the background
 * and found again, its protocol, its clients (token, header, api, proxy, exec, status, the library)
 * in a place that holds no config at all, one renewal however many clients ask, and what never
 * crosses the socket. The container case runs the clients under bubblewrap with only the socket
 * bound; another local user is refused by the socket's directory.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentSocketPath, BIN, farSideEnv, hostProfiles, startAgent } from '../support/agent.js';
import { makeConfigDir, runCli, startCli } from '../support/cli.js';
import { signalPid } from '../support/signal.js';
import { readConfig, refreshGrants, startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;
const run = promisify(execFile);

/** `curl --unix-socket SOCKET ARGS`: status and body (asynchronous: the emulator answers in this process). */
async function curlAgent(socket: string, ...args: string[]): Promise<{ status: string; body: Json }> {
  const { stdout } = await run('curl', ['-s', '-w', '\n%{http_code}', '--unix-socket', socket, ...args], {
    timeout: 15_000,
  });
  const lines = stdout.trimEnd().split('\n');
  const status = lines.pop() ?? '';
  return { status, body: JSON.parse(lines.join('\n') || '{}') as Json };
}

describe('mmauth agent', () => {
  it('serves the named profile to clients that hold no config: token, header, api, status, the library; another profile is refused; after --stop each fails with agent_unreachable (exit 3)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const far = farSideEnv(socket);
    const stored = (readConfig(configDir) as Json).profiles.work.token;

    const token = await runCli(['token'], { env: far });
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toBe(stored.access_token);
    const header = await runCli(['header', '--json'], { env: far });
    expect(JSON.parse(header.stdout)).toEqual({ Authorization: `Bearer ${stored.access_token}` });
    const api = await runCli(['api', '/api/me'], { env: far });
    expect(api.code, api.stderr).toBe(0);
    const status = JSON.parse((await runCli(['status', '--json'], { env: far })).stdout) as Json;
    expect(status.selected_by).toBe('agent');
    expect(status.agent.profiles).toEqual([
      expect.objectContaining({ name: 'work', base_url: emulator.baseUrl, error: null }),
    ]);
    // The library, in a process whose environment names the agent only.
    const library = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { getToken } = await import(${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)}); const t = await getToken(); console.log(t.accessToken, t.profile);`,
      ],
      { env: { PATH: process.env.PATH ?? '', ...far }, timeout: 15_000 },
    );
    expect(library.stdout.trim()).toBe(`${stored.access_token} work`);

    const other = await runCli(['token', '--profile', 'other', '--json'], { env: far });
    expect(other.code).toBe(4);
    expect((JSON.parse(other.stdout) as Json).error.code).toBe('profile_not_served');
    expect(other.stdout).not.toContain((readConfig(configDir) as Json).profiles.other.token.access_token);
    // Nothing was read where the clients ran: the empty config directory stays empty.
    expect(existsSync(`${far.MMAUTH_CONFIG_DIR}/config.json`)).toBe(false);

    const stop = await runCli(['agent', '--stop'], { env: far });
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain('unset MMAUTH_AGENT_SOCK;');
    for (const args of [['token'], ['header'], ['api', '/api/me'], ['status']]) {
      const after = await runCli(
        [...args, '--json'].filter((a) => !(args[0] === 'api' && a === '--json')),
        { env: far },
      );
      expect(after.code, `${args[0]}: ${after.stderr}`).toBe(3);
      expect(after.stderr + after.stdout).toContain('agent');
    }
  });

  it('the protocol: token answers carry schema_version, access_token, token_type, expires_at, scope, profile, base_url and never a refresh token or secret; a browser request is refused; bad requests get error documents', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const work = (readConfig(configDir) as Json).profiles.work;
    const answer = await curlAgent(socket, 'http://agent/v1/token?profile=work');
    expect(answer.status).toBe('200');
    expect(answer.body).toMatchObject({
      schema_version: 1,
      access_token: work.token.access_token,
      token_type: 'bearer',
      scope: 'service',
      profile: 'work',
      base_url: emulator.baseUrl,
    });
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain(work.token.refresh_token);
    expect(text).not.toContain(emulator.client.clientSecret);
    for (const header of ['Origin: https://evil.example', 'Sec-Fetch-Site: cross-site']) {
      const refused = await curlAgent(socket, '-H', header, 'http://agent/v1/token');
      expect(refused.status).toBe('403');
      expect(refused.body.error.code).toBe('forbidden_origin');
    }
    expect((await curlAgent(socket, 'http://agent/v1/token?min_ttl=x')).body.error.code).toBe('usage');
    expect((await curlAgent(socket, 'http://agent/v2/token')).body.error.code).toBe('usage');
    const status = await curlAgent(socket, 'http://agent/v1/status');
    expect(status.body).toMatchObject({ schema_version: 1, default_profile: 'work', profiles: [{ name: 'work' }] });
    // The socket is the user's alone: 0600 in a 0700 directory.
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it("ten clients asking across the token's expiry cause one renewal, in the agent", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const far = farSideEnv(socket);
    // The token goes stale for every clock (the file changed: the agent reads it again).
    const config = readConfig(configDir) as Json;
    config.profiles.work.token.expires_at = new Date(Date.now() + 2_000).toISOString();
    config.profiles.work.token.obtained_at = new Date(Date.now() - 7_198_000).toISOString();
    writeFileSync(`${configDir}/config.json`, JSON.stringify(config), { mode: 0o600 });
    const before = refreshGrants(emulator);
    const results = await Promise.all(Array.from({ length: 10 }, () => runCli(['token'], { env: far })));
    expect(results.map((r) => r.code)).toEqual(Array.from({ length: 10 }, () => 0));
    expect(new Set(results.map((r) => r.stdout.trim())).size).toBe(1);
    expect(refreshGrants(emulator) - before).toBe(1);
    expect(results[0]?.stdout.trim()).toBe((readConfig(configDir) as Json).profiles.work.token.access_token);
  });

  it("proxy and exec --proxy through the agent: requests reach the API with the agent's token, from a place with no config", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const far = farSideEnv(socket);
    const proxy = startCli(['proxy', '--json'], { env: far, timeoutMs: 30_000 });
    const [line] = await proxy.waitForStdout(/\{"schema_version":1,"url":"[^"]+"[^}]*\}/);
    const { url } = JSON.parse(line) as { url: string };
    expect((await fetch(`${url}/api/me`)).status).toBe(200);
    const exec = await runCli(
      ['exec', '--proxy', '--', 'sh', '-c', 'curl -s -o /dev/null -w "%{http_code}" "$MMAUTH_API_URL/api/me"'],
      { env: { ...far, PATH: process.env.PATH ?? '' } },
    );
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toBe('200');
  });

  it('eval "$(mmauth agent)": started in the background with sh lines; a second start finds the same agent; --stop ends it and removes the socket', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { env } = await hostProfiles(emulator);
    const runtime = dirname(agentSocketPath());
    const withRuntime = { ...env, XDG_RUNTIME_DIR: runtime, MMAUTH_PROFILE: 'work' };
    const first = await runCli(['agent'], { env: withRuntime });
    expect(first.code, first.stderr).toBe(0);
    const socket = /MMAUTH_AGENT_SOCK='([^']+)'; export MMAUTH_AGENT_SOCK;/.exec(first.stdout)?.[1] ?? '';
    const pid = Number(/MMAUTH_AGENT_PID=(\d+); export MMAUTH_AGENT_PID;/.exec(first.stdout)?.[1]);
    onTestFinished(() => {
      signalPid(pid, 'SIGKILL', true);
    });
    expect(socket.startsWith(runtime)).toBe(true);
    const second = JSON.parse((await runCli(['agent', '--json'], { env: withRuntime })).stdout) as Json;
    expect(second).toEqual({ schema_version: 1, socket, pid });
    expect((await runCli(['token'], { env: farSideEnv(socket) })).code).toBe(0);
    const stop = await runCli(['agent', '--stop', '--json'], { env: { MMAUTH_AGENT_SOCK: socket } });
    expect(JSON.parse(stop.stdout)).toMatchObject({ socket, pid, stopped: true });
    const deadline = Date.now() + 10_000;
    while (existsSync(socket) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(socket)).toBe(false);
  });

  it('a container (bubblewrap: a mount namespace where the config directory and HOME are empty and only the socket is bound): token, api and the library get the served token; another profile is refused', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const inside = '/run/mmauth-agent.sock';
    const container = (...command: string[]) =>
      run(
        'bwrap',
        [
          '--ro-bind',
          '/',
          '/',
          // The host's config directory and the agent's own directory empty (the checkout stays:
          // CI may clone under /tmp or HOME); a home of its own on a tmpfs; the socket bound alone.
          '--tmpfs',
          configDir,
          '--tmpfs',
          dirname(socket),
          '--tmpfs',
          '/run',
          '--dir',
          '/run/home',
          '--bind',
          socket,
          inside,
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-pid',
          '--die-with-parent',
          '--setenv',
          'MMAUTH_AGENT_SOCK',
          inside,
          '--setenv',
          'HOME',
          '/run/home',
          '--setenv',
          'MMAUTH_CONFIG_DIR',
          '/run/home/mmauth',
          '--unsetenv',
          'XDG_RUNTIME_DIR',
          '--',
          ...command,
        ],
        { timeout: 20_000, env: { PATH: process.env.PATH ?? '' } },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({
          code: e.code ?? -1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
        }),
      );
    const seen = await container(
      'sh',
      '-c',
      `find ${configDir} ${dirname(socket)} -mindepth 1 | wc -l; test -S ${inside} && echo socket`,
    );
    expect(seen.stdout.trim().split('\n')).toEqual(['0', 'socket']);
    const work = (readConfig(configDir) as Json).profiles.work.token.access_token as string;
    const token = await container(process.execPath, BIN, 'token');
    expect(token.stdout.trim(), token.stderr).toBe(work);
    expect((await container(process.execPath, BIN, 'api', '/api/me')).code).toBe(0);
    const lib = await container(
      process.execPath,
      '--input-type=module',
      '-e',
      `const { getToken } = await import(${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)}); console.log((await getToken()).accessToken);`,
    );
    expect(lib.stdout.trim(), lib.stderr).toBe(work);
    const other = await container(process.execPath, BIN, 'token', '--profile', 'other');
    expect(other.code).toBe(4);
  });

  it.runIf(process.getuid?.() === 0)(
    "another local user cannot get a token from the agent's socket (its directory is 0700)",
    async () => {
      const emulator = await startTestEmulator({ autoApprove: true });
      const { env } = await hostProfiles(emulator);
      const { socket } = await startAgent(env);
      const attempt = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('curl', ['-s', '-S', '--unix-socket', socket, 'http://agent/v1/token'], {
          uid: 65534,
          gid: 65534,
          env: { PATH: process.env.PATH ?? '' },
          cwd: '/',
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.on('close', (code) => resolve({ code, out }));
      });
      expect(attempt.code).not.toBe(0);
      expect(attempt.out).not.toContain('access_token');
      expect(attempt.out).toMatch(/denied|Couldn't connect|Failed to connect/i);
    },
  );

  it("login, logout and revoke say they act on this machine's profiles while MMAUTH_AGENT_SOCK is set", async () => {
    const configDir = makeConfigDir();
    const result = await runCli(['logout', '--local-only'], {
      env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_AGENT_SOCK: agentSocketPath() },
    });
    expect(result.stderr).toContain("MMAUTH_AGENT_SOCK is set: logout acts on this machine's own profiles");
  });
});
