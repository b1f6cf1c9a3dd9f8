/**
 * `exec --sandbox` as a wall (attacks S1, S2, S3): a hostile child in a real terminal (tmux, an
 * interactive shell) tries every route out — pushing a line into the terminal, planting code in
 * start-up files and the repository, the grant (config directory, keyring), other mmauth processes
 * (an agent, another exec, another proxy), anything else on loopback, an abstract socket. Each route
 * is tried without --sandbox (the control: it is open) and under --sandbox in each of its modes
 * (token, --serve, --proxy), where every one is closed and what the child may do still works.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentSocketPath, startAgent } from '../support/agent.js';
import { BIN, HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli, startCli } from '../support/cli.js';
import { startTestEmulator, type TestEmulator } from '../support/emulator.js';
import { fileLogin } from '../support/file-login.js';
import { startProxy } from '../support/proxy.js';
import { useSecretService } from '../support/secret-service.js';
import { startInTmux } from '../support/tmux.js';

type Json = Record<string, any>;

const service = useSecretService();
const ESCAPE = resolve(import.meta.dirname, '../support/attacker/sandbox-escape.mjs');

/** Everything the hostile child is pointed at, set up once: the victim's grant and other mmauth processes. */
interface Scene {
  emulator: TestEmulator;
  env: Record<string, string>;
  home: string;
  targets: Json;
  collected: () => number;
  abstractOpened: () => number;
}

/** A login with the keyring, an agent, another exec with an endpoint, another proxy, a collector, an abstract socket. */
async function setScene(): Promise<Scene> {
  const emulator = await startTestEmulator({ autoApprove: true });
  const home = makeScratchDir('victim-home-', 0o755);
  const configDir = makeConfigDir();
  const env: Record<string, string> = {
    ...(emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) as Record<string, string>),
    HOME: home,
    DBUS_SESSION_BUS_ADDRESS: service.address,
    MMAUTH_CREDENTIAL_STORE: 'keyring',
    PATH: process.env.PATH ?? '',
  };
  const login = await runCli(['login'], { env });
  expect(login.code, login.stderr).toBe(0);
  delete env.MMAUTH_BASE_URL;
  delete env.MMAUTH_CLIENT_ID;
  // A directory file beside the child is ignored with the profile named (it would need approval).
  env.MMAUTH_PROFILE = 'default';
  writeFileSync(join(home, '.bashrc'), "# the user's\n");
  writeFileSync(join(home, '.profile'), "# the user's\n");
  mkdirSync(join(home, '.local', 'bin'), { recursive: true });
  // Where an agent started without XDG_RUNTIME_DIR listens: a mmauth-agent-* directory in the temporary directory.
  const agentSocket = (await startAgent(env, ['--profile', 'default'], agentSocketPath('mmauth-agent-'))).socket;
  // Another exec, with a token endpoint, whose child tells us its variables.
  const otherVars = join(makeScratchDir('victim-other-', 0o755), 'env');
  startCli(
    ['exec', '--serve', '--', 'sh', '-c', `env > ${otherVars}.tmp; mv ${otherVars}.tmp ${otherVars}; sleep 120`],
    {
      env,
      timeoutMs: 120_000,
    },
  );
  for (let i = 0; i < 100 && !existsSync(otherVars); i++) await new Promise((r) => setTimeout(r, 100));
  const other = Object.fromEntries(
    readFileSync(otherVars, 'utf8')
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  ) as Record<string, string>;
  const proxy = await startProxy(env, [], 120_000);
  const { socket: proxySocket } = JSON.parse(proxy.proxy.stdout().trim().split('\n')[0] ?? '{}') as { socket: string };
  let collected = 0;
  const collector = createHttpServer((_req, res) => {
    collected += 1;
    res.end('collected');
  });
  await new Promise<void>((done) => collector.listen(0, '127.0.0.1', done));
  onTestFinished(() => void collector.close());
  let abstractOpened = 0;
  const abstractName = `mmauth-test-abstract-${process.pid}-${Date.now()}`;
  const abstract = createServer((socket) => {
    abstractOpened += 1;
    socket.destroy();
  });
  await new Promise<void>((done) => abstract.listen(`\0${abstractName}`, done));
  onTestFinished(() => void abstract.close());
  return {
    emulator,
    env,
    home,
    collected: () => collected,
    abstractOpened: () => abstractOpened,
    targets: {
      home,
      configDir,
      busAddress: service.address,
      agentSocket,
      otherTokenFile: other.MMAUTH_TOKEN_FILE,
      otherEndpointPort: Number(new URL(other.MMAUTH_TOKEN_URL ?? 'http://x:1').port),
      otherEndpointAuthorization: `Bearer ${other.MMAUTH_TOKEN_URL_AUTHORIZATION ?? ''}`,
      otherEndpointSocket: other.MMAUTH_TOKEN_SOCKET,
      otherProxySocket: proxySocket,
      otherProxyPort: proxy.port,
      collectorPort: (collector.address() as AddressInfo).port,
      abstractName,
      apiPort: Number(new URL(emulator.baseUrl).port),
    },
  };
}

/** A repository the child works in: .git/hooks, .git/config and a directory file, all the user's. */
function repository(): string {
  const repo = makeScratchDir('victim-repo-', 0o755);
  mkdirSync(join(repo, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(repo, '.git', 'config'), '[core]\n\tbare = false\n');
  writeFileSync(join(repo, '.mmauth-profile'), 'default\n');
  return repo;
}

/**
 * Runs the hostile child under `mmauth exec ARGS` typed into an interactive shell in tmux (stdin
 * the terminal); resolves with what it reached and whether the shell then ran the line it pushed.
 */
async function attack(scene: Scene, args: string[]): Promise<{ got: Json; injected: boolean; repo: string }> {
  const repo = repository();
  const allowed = makeScratchDir('victim-allowed-', 0o755);
  const out = join(makeScratchDir('victim-out-', 0o755), 'result.json');
  const pwned = join(makeScratchDir('victim-pwned-', 0o755), 'pwned');
  const targets = { ...scene.targets, repo, allowedDir: allowed, injectLine: `touch ${pwned}` };
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const line = [
    `cd ${quote(repo)} &&`,
    process.execPath,
    BIN,
    ...args.map((arg) => (arg === 'ALLOWED' ? allowed : arg)),
    '--',
    process.execPath,
    ESCAPE,
    quote(JSON.stringify(targets)),
    `> ${quote(out)}; echo "exit-$?"`,
  ].join(' ');
  const terminal = startInTmux(['bash', '--norc', '--noprofile', '-i'], scene.env);
  await terminal.waitFor(/[#$] $/m);
  terminal.send([line], { literal: true });
  terminal.send(['Enter']);
  await terminal.waitFor(/exit-\d+/, 60_000);
  // A pushed line runs as soon as the shell reads its next input: give it that moment.
  for (let i = 0; i < 20 && !existsSync(pwned); i++) await new Promise((r) => setTimeout(r, 100));
  expect(terminal.screen()).toContain('exit-0');
  return { got: JSON.parse(readFileSync(out, 'utf8')) as Json, injected: existsSync(pwned), repo };
}

const ROUTES = [
  'bashrc',
  'profile',
  'localBin',
  'hook',
  'gitConfig',
  'directoryFile',
  'config',
  'agent',
  'otherTokenFile',
  'otherEndpointTcp',
  'otherEndpointSocket',
  'otherProxySocket',
  'otherProxyTcp',
  'collector',
  'abstract',
] as const;

describe('exec --sandbox against a hostile child in a real terminal', () => {
  it('without --sandbox (the control) every route is open; under --sandbox, in each mode (token, --serve, --proxy), every route is closed, while the working directory, a temp file and --allow-write take writes and the API answers', async () => {
    const scene = await setScene();
    const control = await attack(scene, ['exec']);
    expect(control.injected, 'control: the pushed line ran in the shell').toBe(true);
    for (const route of ROUTES) expect(control.got[route], `control: ${route}`).toBe(true);
    expect(control.got.keyringSecrets).toBeGreaterThan(0);
    expect(scene.collected()).toBeGreaterThan(0);
    expect(scene.abstractOpened()).toBeGreaterThan(0);

    const modes: Array<[string, string[]]> = [
      ['token', ['exec', '--sandbox', '--allow-write', 'ALLOWED']],
      ['--serve', ['exec', '--sandbox', '--serve', '--allow-write', 'ALLOWED']],
      ['--proxy', ['exec', '--sandbox', '--proxy', '--allow-write', 'ALLOWED']],
    ];
    for (const [mode, args] of modes) {
      const bashrc = readFileSync(join(scene.home, '.bashrc'), 'utf8');
      const collectedBefore = scene.collected();
      const abstractBefore = scene.abstractOpened();
      const { got, injected, repo } = await attack(scene, args);
      expect(injected, `${mode}: the pushed line ran in the shell`).toBe(false);
      for (const route of ROUTES) expect(got[route], `${mode}: ${route}`).toBe(false);
      expect(got.keyringSecrets, `${mode}: keyring`).toBe(0);
      expect(scene.collected(), `${mode}: collector`).toBe(collectedBefore);
      expect(scene.abstractOpened(), `${mode}: abstract socket`).toBe(abstractBefore);
      expect(readFileSync(join(scene.home, '.bashrc'), 'utf8')).toBe(bashrc);
      expect(existsSync(join(repo, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(readFileSync(join(repo, '.mmauth-profile'), 'utf8')).toBe('default\n');
      expect(got, mode).toMatchObject({ build: true, tmp: true, allowed: true });
      expect(readFileSync(join(repo, 'build', 'out.txt'), 'utf8')).toBe('built\n');
      if (mode === '--proxy') expect(got.apiViaProxy, `${mode}: the API through its proxy`).toBe(true);
      else expect(got.api, `${mode}: the API with its token`).toBe(true);
    }
  }, 240_000);
});

describe('clients that reach the API from the sandbox', () => {
  it('curl, Python urllib and Node fetch (with undici EnvHttpProxyAgent) reach the API under --sandbox --proxy, and with the token under --sandbox; another host or port gets nothing', async () => {
    const { emulator, env } = await fileLogin();
    const cwd = makeScratchDir('victim-cwd-', 0o755);
    const undici = resolve(import.meta.dirname, '../../node_modules/undici/index.js');
    chmodSync(cwd, 0o755);
    const clients = (url: string, header: string) =>
      [
        `curl -s -o /dev/null -w "curl-%{http_code} " ${header === '' ? '' : `-H "${header}"`} "${url}";`,
        `python3 -c "import urllib.request as u; r = u.Request('${url}'${header === '' ? '' : `, headers={'Authorization': '${header.slice(15)}'}`}); print('python-' + str(u.urlopen(r).status), end=' ')" 2>/dev/null || printf 'python-failed ';`,
        `node -e "const { EnvHttpProxyAgent, setGlobalDispatcher } = require('${undici}'); setGlobalDispatcher(new EnvHttpProxyAgent()); fetch('${url}'${header === '' ? '' : `, { headers: { authorization: '${header.slice(15)}' } }`}).then((r) => console.log('node-' + r.status), () => console.log('node-failed'))";`,
      ].join(' ');
    const proxied = await runCli(
      ['exec', '--sandbox', '--proxy', '--', 'sh', '-c', clients('$MMAUTH_API_URL/api/me', '')],
      {
        env,
        cwd,
        timeoutMs: 60_000,
      },
    );
    expect(proxied.stdout.trim(), proxied.stderr).toBe('curl-200 python-200 node-200');
    const withToken = await runCli(
      [
        'exec',
        '--sandbox',
        '--',
        'sh',
        '-c',
        clients(`${emulator.baseUrl}/api/me`, 'Authorization: Bearer $MMAUTH_TOKEN'),
      ],
      { env, cwd, timeoutMs: 60_000 },
    );
    expect(withToken.stdout.trim(), withToken.stderr).toBe('curl-200 python-200 node-200');
    const elsewhere = await runCli(
      [
        'exec',
        '--sandbox',
        '--',
        'sh',
        '-c',
        'curl -s -m 5 -o /dev/null -w "%{http_code}" http://127.0.0.1:9/x; echo; curl -s -m 5 -o /dev/null -w "%{http_code}" http://elsewhere.invalid/; echo',
      ],
      { env, cwd, timeoutMs: 60_000 },
    );
    // Loopback is the child's own (nothing listens at port 9 there: refused); another host, the engine's proxy refuses.
    expect(elsewhere.stdout.trim().split('\n')).toEqual(['000', '403']);
  }, 120_000);
});

describe('an interactive child keeps its terminal under --sandbox', () => {
  it('stdin and stdout stay the terminal: raw-mode keys reach it, its window size is the terminal’s, Ctrl-C reaches it (exit 130)', async () => {
    const { env } = await fileLogin();
    const child = [
      "process.stdout.write('size ' + process.stdout.columns + 'x' + process.stdout.rows + ' tty ' + process.stdin.isTTY + '\\n');",
      "process.stdin.setRawMode(true); let keys = '';",
      "process.stdin.on('data', (d) => { keys += d; if (keys.includes('q')) {",
      '  process.stdin.setRawMode(false); process.stdin.pause();',
      "  process.stdout.write('keys ' + JSON.stringify(keys) + '\\nwaiting\\n'); setInterval(() => {}, 1000); } });",
    ].join(' ');
    const cwd = makeScratchDir('victim-cwd-', 0o755);
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    const terminal = startInTmux(['bash', '--norc', '--noprofile', '-i'], env);
    await terminal.waitFor(/[#$] $/m);
    terminal.send(
      [
        `cd ${quote(cwd)} && ${process.execPath} ${BIN} exec --sandbox -- ${process.execPath} -e ${quote(child)}; echo "exit-$?"`,
      ],
      { literal: true },
    );
    terminal.send(['Enter']);
    await terminal.waitFor(/size \d+x\d+ tty true/, 30_000);
    expect(terminal.screen()).toContain('size 200x50 tty true');
    terminal.send(['a', 'b', 'C-a', 'q']);
    // Raw mode: each key as it is typed, Ctrl-A as a byte (no line discipline in between).
    await terminal.waitFor(/keys "ab\\u0001q"/, 10_000);
    await terminal.waitFor(/waiting/, 10_000);
    terminal.send(['C-c']);
    await terminal.waitFor(/exit-130/, 15_000);
  }, 90_000);
});

describe('a symlinked HOME and config directory (as on Fedora Silverblue: /home → var/home)', () => {
  it('--sandbox runs and hides the config by its link and by its real path; doctor says the sandbox works, as exec found', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const real = makeScratchDir('victim-real-', 0o755);
    const links = makeScratchDir('victim-links-', 0o755);
    // HOME through a link, and MMAUTH_CONFIG_DIR inside it: the config directory's path holds a link.
    mkdirSync(join(real, 'home', '.config', 'mmauth'), { recursive: true, mode: 0o700 });
    symlinkSync(join(real, 'home'), join(links, 'home'));
    const configDir = join(links, 'home', '.config', 'mmauth');
    const env = {
      ...(emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }) as Record<string, string>),
      HOME: join(links, 'home'),
      MMAUTH_CREDENTIAL_STORE: 'file',
      PATH: process.env.PATH ?? '',
    };
    const login = await runCli(['login'], { env });
    expect(login.code, login.stderr).toBe(0);
    const cwd = makeScratchDir('victim-cwd-', 0o755);
    const probe = `for f in ${join(configDir, 'config.json')} ${join(real, 'home', '.config', 'mmauth', 'config.json')}; do test -r $f && echo "read $f"; done; echo done`;
    const boxed = await runCli(['exec', '--sandbox', '--json', '--', 'sh', '-c', probe], {
      env,
      cwd,
      timeoutMs: 60_000,
    });
    expect(boxed.code, boxed.stderr + boxed.stdout).toBe(0);
    expect(boxed.stdout.trim()).toBe('done');
    const doctor = await runCli(['doctor', '--json'], { env, cwd, timeoutMs: 60_000 });
    const sandbox = ((JSON.parse(doctor.stdout) as Json).checks as Json[]).find((check) => check.name === 'sandbox');
    expect(sandbox).toMatchObject({ status: 'ok' });
  }, 90_000);
});
