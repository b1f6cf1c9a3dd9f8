/**
 * `exec --sandbox` against another local user (uid 65534, `nobody`), played literally: one who
 * binds the engine's socket names in the shared /tmp first, one who reads every process's command
 * line and the port table and drives the engine's proxy with the credentials found there, and a
 * sandboxed child of a user that forks as much as it can while that user's shell needs to fork.
 * Spawning as another uid needs root, as CI and these machines run the suite.
 */
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanEnv, makeScratchDir, startCli } from '../support/cli.js';
import { fileLogin } from '../support/file-login.js';
import { until } from '../support/until.js';

/** `nobody` on Debian: another user than the one running the suite. */
const OTHER_UID = 65534;
const isRoot = process.getuid?.() === 0;

/** Runs `script` (Node, CommonJS) as OTHER_UID with `args`; resolves with its stdout (bounded: `timeoutMs`). */
function runAsOtherUser(script: string, args: string[] = [], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, ...args], {
      uid: OTHER_UID,
      gid: OTHER_UID,
      env: {},
      cwd: '/',
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`the other user's script failed (exit ${String(code)}): ${err}`));
    });
  });
}

/** A directory of the other user's (0755), removed when the test ends. */
function otherUsersDir(prefix: string): string {
  const dir = makeScratchDir(prefix, 0o755);
  chownSync(dir, OTHER_UID, OTHER_UID);
  return dir;
}

describe.runIf(isRoot)('exec --sandbox against another local user (uid 65534)', () => {
  it("another user's /tmp/srt-mux-<pid>-0.sock for every pid the next 3,000 processes may get: --sandbox starts all the same, and the engine's sockets are in a private directory of the run's", async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-squatted-', 0o755);
    const first = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8')) + 1;
    // The other user takes the engine's socket name for each pid from `first` on (files of its own in sticky /tmp).
    const squat = `const fs = require('node:fs'); const first = Number(process.argv[1]);
      let made = 0; for (let pid = first; pid < first + 3000; pid++) {
        try { fs.writeFileSync('/tmp/srt-mux-' + pid + '-0.sock', ''); made++; } catch {} }
      console.log(made);`;
    const made = Number(await runAsOtherUser(squat, [String(first)]));
    onTestFinished(() => {
      for (let pid = first; pid < first + 3000; pid++) rmSync(`/tmp/srt-mux-${pid}-0.sock`, { force: true });
    });
    expect(made).toBeGreaterThan(2_900);
    const run = startCli(['exec', '--sandbox', '--', 'sh', '-c', 'echo inside'], {
      env,
      cwd,
      timeoutMs: 60_000,
    });
    const result = await run.done;
    const pid = run.child.pid ?? 0;
    // The attack was aimed: this run's pid is one the other user took the name for.
    expect(pid).toBeGreaterThanOrEqual(first);
    expect(pid).toBeLessThan(first + 3000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('inside');
    // The engine's sockets went to the run's own directory, gone with the run.
    expect(existsSync(`/tmp/srt-mux-${pid}-0.sock`)).toBe(true);
    expect(readFileSync(`/tmp/srt-mux-${pid}-0.sock`, 'utf8')).toBe('');
  }, 90_000);

  it("another user who reads the victim's command lines (the engine's proxy credentials) and port table, and sends requests to every loopback port through the engine's proxy: none reaches the --proxy or --serve endpoint with a token; the victim's own child is served", async () => {
    const { emulator, env } = await fileLogin();
    const cwd = makeScratchDir('victim-proc-', 0o755);
    const child = (name: string) =>
      `printf %s "$MMAUTH_API_URL" > ${name}.url; curl -s -o /dev/null -w %{http_code} "$MMAUTH_API_URL/api/me" > ${name}.own; sleep 40`;
    const proxied = startCli(['exec', '--sandbox', '--proxy', '--', 'sh', '-c', child('proxy')], {
      env,
      cwd,
      timeoutMs: 60_000,
    });
    const served = startCli(['exec', '--sandbox', '--serve', '--', 'sh', '-c', 'echo ready > serve.url; sleep 40'], {
      env,
      cwd,
      timeoutMs: 60_000,
    });
    await until(
      () => existsSync(join(cwd, 'proxy.own')) && existsSync(join(cwd, 'serve.url')),
      30_000,
      'both children',
    );
    await until(() => readFileSync(join(cwd, 'proxy.own'), 'utf8') !== '', 10_000, "the child's own request");
    // The route is there for the victim's child: its own request through mmauth's proxy was served.
    expect(readFileSync(join(cwd, 'proxy.own'), 'utf8')).toBe('200');
    const withToken = () => emulator.requests.filter((request) => request.headers.authorization !== undefined).length;
    const withTokenBefore = withToken();
    const attack = `const fs = require('node:fs'); const http = require('node:http');
      const found = { credentials: new Set(), proxyPorts: new Set() };
      for (const pid of fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name))) {
        let words; try { words = fs.readFileSync('/proc/' + pid + '/cmdline', 'latin1').split('\\0'); } catch { continue; }
        for (let i = 0; i < words.length; i++) {
          const proxy = /^https?_proxy=?http:\\/\\/([^@]+)@/i.exec(words[i] === '--setenv' ? words[i + 1] + '=' + words[i + 2] : words[i]);
          if (proxy) found.credentials.add(decodeURIComponent(proxy[1]));
          if (words[i] === 'CLAUDE_CODE_HOST_HTTP_PROXY_PORT') found.proxyPorts.add(Number(words[i + 1]));
        }
      }
      const ports = new Set();
      for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\\n').slice(1)) {
        const m = /^\\s*\\d+: 0100007F:([0-9A-F]{4}) 00000000:0000 0A/.exec(line);
        if (m) ports.add(parseInt(m[1], 16));
      }
      const ask = (proxyPort, credentials, target) => new Promise((resolve) => {
        const request = http.request({ host: '127.0.0.1', port: proxyPort, method: 'GET', path: target,
          headers: { 'proxy-authorization': 'Basic ' + Buffer.from(credentials).toString('base64') }, timeout: 3000 },
          (response) => { let body = ''; response.on('data', (c) => (body += c)); response.on('end', () => resolve({ target, status: response.statusCode, body: body.slice(0, 300) })); });
        request.on('error', (e) => resolve({ target, status: 0, body: String(e.code) }));
        request.on('timeout', () => request.destroy());
        request.end();
      });
      (async () => {
        const answers = [];
        for (const proxyPort of found.proxyPorts) for (const credentials of found.credentials) {
          const asks = [];
          for (const port of ports) for (const path of ['/api/me', '/', '/token'])
            asks.push(ask(proxyPort, credentials, 'http://127.0.0.1:' + port + path));
          answers.push(...(await Promise.all(asks)).map((a) => ({ proxyPort, ...a })));
        }
        console.log(JSON.stringify({ credentials: found.credentials.size, proxyPorts: [...found.proxyPorts], answers }));
      })();`;
    const report = JSON.parse(await runAsOtherUser(attack, [], 60_000)) as {
      credentials: number;
      proxyPorts: number[];
      answers: Array<{ target: string; status: number; body: string }>;
    };
    // The other user did find the engine's proxy and its credentials, and reached mmauth's endpoints through it.
    expect(report.credentials).toBeGreaterThan(0);
    expect(report.proxyPorts.length).toBeGreaterThan(0);
    const apiOrigin = new URL(readFileSync(join(cwd, 'proxy.url'), 'utf8')).origin;
    const atEndpoint = report.answers.filter((answer) => answer.target.startsWith(apiOrigin));
    expect(atEndpoint.length).toBeGreaterThan(0);
    expect(atEndpoint.map((answer) => answer.status)).toContain(404);
    expect(atEndpoint.filter((answer) => answer.status === 200)).toEqual([]);
    // Nothing it sent carried the victim's token anywhere: no access token in any answer, no request with one at the server.
    for (const answer of report.answers) expect(answer.body, answer.target).not.toContain('access_token');
    expect(withToken()).toBe(withTokenBefore);
    proxied.child.kill('SIGTERM');
    served.child.kill('SIGTERM');
    await Promise.all([proxied.done, served.done]);
  }, 120_000);

  it("a sandboxed child of a user limited to 300 processes forks all it can: it stops at the sandbox's cap, and the user's own shell can still fork", async () => {
    const home = otherUsersDir('victim-forks-');
    const cwd = join(home, 'project');
    mkdirSync(cwd);
    chownSync(cwd, OTHER_UID, OTHER_UID);
    const limit = 300;
    // The user's shell, started first with the same limit: it forks once when told.
    const shell = spawn(
      'python3',
      [
        '-c',
        `import os, resource, sys
resource.setrlimit(resource.RLIMIT_NPROC, (${limit}, ${limit}))
print('ready', flush=True)
sys.stdin.readline()
try:
    pid = os.fork()
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0)
    print('forked', flush=True)
except OSError as error:
    print('failed', error.errno, flush=True)`,
      ],
      { uid: OTHER_UID, gid: OTHER_UID, env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] },
    );
    onTestFinished(() => void shell.kill('SIGKILL'));
    let shellOut = '';
    shell.stdout.on('data', (chunk: Buffer) => (shellOut += chunk.toString()));
    await until(() => shellOut.includes('ready'), 10_000, "the user's shell");
    const bomb = `import os, time
n = 0
for i in range(2000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
open('count.new', 'w').write(str(n))
os.rename('count.new', 'count')
time.sleep(20)`;
    const env = cleanEnv({
      MMAUTH_TOKEN: 'not-a-real-token',
      MMAUTH_CONFIG_DIR: join(home, 'config'),
      HOME: home,
      PATH: process.env.PATH ?? '',
    });
    const exec = spawn(
      'bash',
      [
        '-c',
        `ulimit -u ${limit}; exec "$0" "$@"`,
        process.execPath,
        BIN,
        'exec',
        '--sandbox',
        '--',
        'python3',
        '-c',
        bomb,
      ],
      { uid: OTHER_UID, gid: OTHER_UID, env, cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let execErr = '';
    exec.stderr.on('data', (chunk: Buffer) => (execErr += chunk.toString()));
    onTestFinished(() => void exec.kill('SIGKILL'));
    // The count arrives by rename, whole: a file read between its creation and its write read as 0.
    await until(() => existsSync(join(cwd, 'count')) || exec.exitCode !== null, 60_000, 'the fork bomb to stop');
    expect(existsSync(join(cwd, 'count')), execErr).toBe(true);
    const forked = Number(readFileSync(join(cwd, 'count'), 'utf8'));
    shell.stdin.write('go\n');
    await until(() => /forked|failed/.test(shellOut), 10_000, "the user's shell to fork");
    const seen = `the child forked ${forked}; the shell said ${JSON.stringify(shellOut)}; exec said ${JSON.stringify(execErr)}`;
    expect(shellOut, seen).toContain('forked');
    expect(forked, seen).toBeGreaterThan(10);
    expect(forked, seen).toBeLessThan(limit);
    exec.kill('SIGTERM');
  }, 120_000);
});
