/**
 * `exec --sandbox`, what it reaches beyond the grant (attacks S4–S6): the user's other secrets in
 * the environment, walls opened by a pattern (the home directory as a writable root, a config
 * directory or runtime root under --allow-write, every host or loopback under --allow-host), and
 * the token files of runs started from another environment (another XDG_RUNTIME_DIR, another
 * TMPDIR). Each has its control: without --sandbox the route is open, so the test can fail.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  rmSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeScratchDir, runCli, startCli } from '../support/cli.js';
import { signalPid } from '../support/signal.js';
import { fileLogin } from '../support/file-login.js';
import { until } from '../support/until.js';
import { reportedVariable, reportingExec } from '../support/reporting-exec.js';

type Json = Record<string, any>;

const SECRETS = {
  GITHUB_TOKEN: 'ghp_outside-secret-1',
  AWS_SECRET_ACCESS_KEY: 'aws-outside-secret-2',
  NPM_TOKEN: 'npm-outside-secret-3',
  my_db_password: 'db-outside-secret-4',
  SERVICE_CREDENTIALS: 'cred-outside-secret-5',
};

describe("the user's other secrets stay outside the sandbox", () => {
  it("GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY and every name with TOKEN, SECRET, KEY, PASSWORD or CREDENTIAL are held back; --pass-env lets one through; mmauth's own variables arrive (without --sandbox, the control, all pass)", async () => {
    const { env } = await fileLogin();
    const withSecrets = { ...env, ...SECRETS };
    const cwd = makeScratchDir('env-cwd-', 0o755);
    const control = await runCli(['exec', '--', 'env'], { env: withSecrets, cwd });
    expect(control.code, control.stderr).toBe(0);
    for (const value of Object.values(SECRETS)) expect(control.stdout).toContain(value);
    const boxed = await runCli(['exec', '--sandbox', '--pass-env', 'NPM_TOKEN', '--verbose', '--', 'env'], {
      env: withSecrets,
      cwd,
      timeoutMs: 30_000,
    });
    expect(boxed.code, boxed.stderr).toBe(0);
    for (const [name, value] of Object.entries(SECRETS)) {
      if (name === 'NPM_TOKEN') expect(boxed.stdout).toContain(`NPM_TOKEN=${value}`);
      else expect(boxed.stdout, name).not.toContain(value);
    }
    expect(boxed.stdout).toMatch(/^MMAUTH_TOKEN=\S+$/m);
    expect(boxed.stdout).toMatch(/^MMAUTH_TOKEN_FILE=\S+$/m);
    // --verbose names what was held back (names only, never values).
    expect(boxed.stderr).toMatch(/held back .*AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN/);
    expect(boxed.stderr).not.toContain('aws-outside-secret-2');
  }, 60_000);
});

describe('a sandbox never opens its walls by a pattern', () => {
  it.each([
    ['the home directory as the working directory', 'home', []],
    ['a directory above the home directory as the working directory', 'above-home', []],
    ['--allow-write of the home directory', 'project', ['--allow-write', '$HOME']],
    ['--allow-write of the config directory', 'project', ['--allow-write', '$CONFIG']],
    ["--allow-write of this user's runtime root", 'project', ['--allow-write', '$RUNTIME']],
    ["--allow-host '*'", 'project', ['--allow-host', '*']],
    ['--allow-host 127.0.0.1:PORT', 'project', ['--allow-host', '127.0.0.1:8080']],
    ['--allow-host localhost', 'project', ['--allow-host', 'localhost']],
  ] as const)(
    '%s: refused (usage, exit 2) before anything runs, the way out named',
    async (_, where, flags) => {
      const { env } = await fileLogin();
      const above = makeScratchDir('victim-above-', 0o755);
      const home = join(above, 'home');
      const project = join(home, 'project');
      mkdirSync(project, { recursive: true });
      const runtime = join(makeScratchDir('victim-xdg-', 0o700), `mmauth-${process.getuid?.() ?? 0}`);
      mkdirSync(runtime, { mode: 0o700 });
      const marker = join(makeScratchDir('victim-marker-', 0o755), 'ran');
      const values: Record<string, string> = {
        $HOME: home,
        $CONFIG: env.MMAUTH_CONFIG_DIR ?? '',
        $RUNTIME: runtime,
      };
      const args = flags.map((flag) => values[flag] ?? flag);
      const cwd = where === 'home' ? home : where === 'above-home' ? above : project;
      const result = await runCli(['exec', '--sandbox', ...args, '--json', '--', 'touch', marker], {
        env: { ...env, HOME: home, XDG_RUNTIME_DIR: join(runtime, '..') },
        cwd,
        timeoutMs: 30_000,
      });
      expect(result.code, result.stderr).toBe(2);
      const error = (JSON.parse(result.stdout) as Json).error;
      expect(error.code).toBe('usage');
      expect(`${error.message} ${error.hint}`).toMatch(/project's directory|name each host/);
      expect(existsSync(marker)).toBe(false);
    },
    60_000,
  );

  it('--allow-write of a directory that does not exist yet makes it (0700), and the child writes there', async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-cwd-', 0o755);
    const cache = join(makeScratchDir('victim-cache-', 0o755), 'npm-cache');
    const result = await runCli(['exec', '--sandbox', '--allow-write', cache, '--', 'touch', join(cache, 'written')], {
      env,
      cwd,
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(cache, 'written'))).toBe(true);
  }, 60_000);
});

/** A plain `mmauth exec` in `extra`'s environment whose child reports its token file, then stays until the test ends. */
const execElsewhere = async (env: Record<string, string>, extra: Record<string, string>) =>
  (await reportingExec({ ...env, ...extra })).tokenFile;

describe("every runtime root of this user is hidden, whatever the child's environment", () => {
  it('token files of runs with another XDG_RUNTIME_DIR and another TMPDIR: unreadable from a sandboxed run without XDG_RUNTIME_DIR (readable without --sandbox, the control)', async () => {
    const { env } = await fileLogin();
    const xdg = makeScratchDir('victim-desktop-xdg-', 0o700);
    const tmp = makeScratchDir('victim-other-tmp-', 0o700);
    const fromDesktop = await execElsewhere(env, { XDG_RUNTIME_DIR: xdg });
    const fromOtherTmp = await execElsewhere(env, { TMPDIR: tmp });
    expect(fromDesktop.startsWith(xdg)).toBe(true);
    expect(fromOtherTmp.startsWith(tmp)).toBe(true);
    const script = `for f in "$@"; do cat "$f" 2>/dev/null || echo denied; done`;
    const cwd = makeScratchDir('victim-cron-cwd-', 0o755);
    const args = ['--', 'sh', '-c', script, 'sh', fromDesktop, fromOtherTmp];
    const control = await runCli(['exec', ...args], { env, cwd, timeoutMs: 30_000 });
    expect(control.code, control.stderr).toBe(0);
    expect(control.stdout.split('\n').filter((line) => line === 'denied')).toEqual([]);
    const boxed = await runCli(['exec', '--sandbox', ...args], { env, cwd, timeoutMs: 30_000 });
    expect(boxed.code, boxed.stderr).toBe(0);
    expect(boxed.stdout.trim().split('\n')).toEqual(['denied', 'denied']);
    writeFileSync(join(cwd, 'done'), '');
  }, 90_000);
});

describe("mmauth's endpoints for a child need a per-run secret, not just the user's uid", () => {
  it("exec --proxy: a request of this user (as the sandbox engine's proxy makes for whoever holds its credentials) without the secret path segment gets 404 and reaches nothing; the child's MMAUTH_API_URL works", async () => {
    const { emulator, env } = await fileLogin();
    const apiUrl = new URL(await reportedVariable(env, 'MMAUTH_API_URL', ['--proxy']));
    expect(apiUrl.pathname).toMatch(/^\/[\w-]{32,}$/);
    const before = emulator.requests.filter((request) => request.url === '/api/me').length;
    for (const path of ['/api/me', `/${apiUrl.pathname.slice(2)}/api/me`, `${apiUrl.pathname}x/api/me`]) {
      const answer = await fetch(`${apiUrl.origin}${path}`);
      expect(answer.status, path).toBe(404);
    }
    expect(emulator.requests.filter((request) => request.url === '/api/me').length).toBe(before);
    const allowed = await fetch(`${apiUrl.href}/api/me`);
    expect(allowed.status).toBe(200);
  }, 60_000);
});

describe('ordinary work inside the sandbox', () => {
  it("a server the child starts on loopback answers the child's curl, Python and Node, while MMAUTH_API_URL (exec --proxy) and MMAUTH_TOKEN_URL (--serve) still answer; the host's loopback stays out of reach", async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-own-server-', 0o755);
    writeFileSync(join(cwd, 'index.html'), 'own-server-page');
    // A server of the host's on loopback: the child must not reach it.
    const { createServer } = await import('node:http');
    const hostServer = createServer((_request, response) => response.end('host-server-page'));
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    const hostPort = (hostServer.address() as { port: number }).port;
    try {
      const script = [
        'python3 -m http.server 0 --bind 127.0.0.1 > server.log 2>&1 & server=$!',
        'for i in $(seq 200); do port=$(sed -n "s/.*port \\([0-9]*\\).*/\\1/p" server.log | head -1); [ -n "$port" ] && break; sleep 0.05; done',
        'echo "curl $(curl -s --max-time 10 http://127.0.0.1:$port/index.html)"',
        'echo "python $(python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())" http://127.0.0.1:$port/index.html)"',
        `echo "node $(${JSON.stringify(process.execPath)} -e "fetch(process.argv[1]).then(r => r.text()).then(t => console.log(t), e => console.log('failed', e.cause?.code))" http://localhost:$port/index.html)"`,
        'echo "api $(curl -s --max-time 10 -o /dev/null -w %{http_code} "$MMAUTH_API_URL/api/me")"',
        `echo "host $(curl -s --max-time 5 http://127.0.0.1:${hostPort}/ || echo unreachable)"`,
        'kill $server',
      ].join('\n');
      const proxied = await runCli(['exec', '--sandbox', '--proxy', '--', 'sh', '-c', script], {
        env,
        cwd,
        timeoutMs: 60_000,
      });
      expect(proxied.code, `${proxied.stderr}\n${proxied.stdout}`).toBe(0);
      for (const client of ['curl', 'python', 'node']) expect(proxied.stdout).toContain(`${client} own-server-page`);
      expect(proxied.stdout).toContain('api 200');
      expect(proxied.stdout).not.toContain('host-server-page');
      const served = await runCli(
        [
          'exec',
          '--sandbox',
          '--serve',
          '--',
          'sh',
          '-c',
          'curl -s --max-time 10 -H "Authorization: Bearer $MMAUTH_TOKEN_URL_AUTHORIZATION" "$MMAUTH_TOKEN_URL"',
        ],
        { env, cwd, timeoutMs: 60_000 },
      );
      expect(served.code, served.stderr).toBe(0);
      expect(served.stdout).toContain('access_token');
    } finally {
      hostServer.close();
    }
  }, 90_000);

  it("mmauth's errors inside the sandbox name what the child has (MMAUTH_API_URL, MMAUTH_TOKEN_FILE), not a login that cannot happen there", async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-inside-errors-', 0o755);
    const nested = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
    const proxied = await runCli(
      ['exec', '--sandbox', '--proxy', '--', 'sh', '-c', `${nested} token; echo "exit $?"`],
      {
        env,
        cwd,
        timeoutMs: 60_000,
      },
    );
    expect(proxied.stdout).toContain('exit 4');
    expect(proxied.stderr).toContain('inside mmauth exec --sandbox');
    expect(proxied.stderr).toContain('MMAUTH_API_URL');
    expect(proxied.stderr).not.toContain('mmauth login');
    const withToken = await runCli(
      ['exec', '--sandbox', '--', 'sh', '-c', `${nested} status --profile other; echo "exit $?"`],
      { env, cwd, timeoutMs: 60_000 },
    );
    expect(withToken.stderr).toContain('MMAUTH_TOKEN_FILE');
    expect(withToken.stderr).not.toContain('mmauth login');
  }, 90_000);

  it('a missing program reads as without --sandbox: "command not found", exit 127', async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-missing-', 0o755);
    for (const sandbox of [[], ['--sandbox']]) {
      const result = await runCli(['exec', ...sandbox, '--', 'no-such-program-here'], { env, cwd, timeoutMs: 30_000 });
      expect(result.code, result.stderr).toBe(127);
      expect(result.stderr).toContain('cannot run no-such-program-here: command not found');
    }
  }, 60_000);
});

/** The pids of `parent`'s children named `comm` (Linux /proc). */
function childrenNamed(parent: number, comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const match = /^\d+ \((.*)\) \S+ (\d+)/s.exec(stat);
      if (match?.[1] === comm && Number(match[2]) === parent) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const isAlive = (pid: number) => {
  try {
    signalPid(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('nothing left behind by a killed run', () => {
  it("the private directories of runs that died without their clean-up (a proxy killed) are removed by the next exec --sandbox; a live run's, and an unmarked one, stay", async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-dead-runs-', 0o755);
    const proxy = startCli(['proxy', '--port', '0'], { env, timeoutMs: 60_000 });
    await proxy.waitForStderr(/127\.0\.0\.1:\d+/, 20_000);
    const root = join(tmpdir(), `mmauth-${process.getuid?.() ?? 0}`);
    const ofProxy = () =>
      readdirSync(root)
        .filter((name) => name.startsWith('mmauth-proxy-') && !name.endsWith('.pid'))
        .map((name) => join(root, name))
        .filter((dir) => existsSync(`${dir}.pid`) && readFileSync(`${dir}.pid`, 'utf8') === String(proxy.child.pid));
    const [killedDir] = ofProxy();
    expect(killedDir).toBeDefined();
    proxy.child.kill('SIGKILL');
    await proxy.done;
    expect(existsSync(killedDir ?? '')).toBe(true);
    const live = mkdtempSync(join(root, 'mmauth-proxy-'));
    writeFileSync(`${live}.pid`, String(process.pid));
    const unmarked = mkdtempSync(join(root, 'mmauth-exec-'));
    try {
      const next = await runCli(['exec', '--sandbox', '--', 'true'], { env, cwd, timeoutMs: 30_000 });
      expect(next.code, next.stderr).toBe(0);
      expect(existsSync(killedDir ?? '')).toBe(false);
      expect(existsSync(`${killedDir ?? ''}.pid`)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(existsSync(unmarked)).toBe(true);
    } finally {
      for (const dir of [live, unmarked, `${live}.pid`]) rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('kill -9 of mmauth: within 5 s no socat, bwrap, find or program of the run runs, its placeholders and temp dir are gone, and what the child planted to run later (a new .git/commondir, a .git file) is moved aside; a placeholder an older run left is removed by the next run', async () => {
    const { env } = await fileLogin();
    const cwd = makeScratchDir('victim-killed-', 0o755);
    expect(spawnSync('git', ['init', '-q', cwd]).status).toBe(0);
    const plant = 'mkdir -p evil inner; echo "$PWD/evil" > .git/commondir; echo "gitdir: $PWD/evil" > inner/.git';
    const running = startCli(
      ['exec', '--sandbox', '--', 'sh', '-c', `${plant}; echo "$TMPDIR" > tmpdir.txt; exec sleep 41`],
      { env, cwd, timeoutMs: 60_000 },
    );
    await until(
      () => existsSync(join(cwd, 'tmpdir.txt')) && existsSync(join(cwd, '.bashrc')),
      20_000,
      'the child to run',
    );
    // Past the watchdog's start (200 ms after the child).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const mmauthPid = running.child.pid ?? 0;
    const helpers = [...childrenNamed(mmauthPid, 'socat'), ...childrenNamed(mmauthPid, 'bwrap')];
    expect(helpers.length, 'the engine runs bwrap and socat for the run').toBeGreaterThan(1);
    // The scan's shell, become a find that waits on its stdin to restat for the review: it ends with mmauth too.
    const restat = childrenNamed(mmauthPid, 'find');
    expect(restat, 'the scan leaves one find waiting for the review').toHaveLength(1);
    helpers.push(...restat);
    running.child.kill('SIGKILL');
    await until(() => helpers.every((pid) => !isAlive(pid)), 5_000, 'every process of the run ended', 100);
    const tmpDir = readFileSync(join(cwd, 'tmpdir.txt'), 'utf8').trim();
    await until(
      () => !existsSync(join(cwd, '.bashrc')) && !existsSync(tmpDir),
      5_000,
      'placeholders and temp dir removed',
      100,
    );
    await until(
      () => !existsSync(join(cwd, '.git', 'commondir')) && !existsSync(join(cwd, 'inner', '.git')),
      5_000,
      'the plants moved aside',
      100,
    );
    expect(readdirSync(join(cwd, '.git')).some((name) => name.startsWith('commondir.mmauth-blocked-'))).toBe(true);
    // A placeholder an older run left (an empty read-only file at one of the engine's names): the next run removes it.
    writeFileSync(join(cwd, '.zshrc'), '');
    chmodSync(join(cwd, '.zshrc'), 0o444);
    const next = await runCli(['exec', '--sandbox', '--', 'true'], { env, cwd, timeoutMs: 30_000 });
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(join(cwd, '.zshrc'))).toBe(false);
  }, 60_000);
});
