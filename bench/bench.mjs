#!/usr/bin/env node
// `npm run bench [-- RESULTS.json] [--pairs N] [--warmup N]`: start-up and request costs of mmauth
// beside `node -e 0`, `gh auth token` and curl, the emulator under autocannon, and the size of a
// production install. Each comparison alternates its two commands (A B A B …) after a
// warm-up, so that drift on a busy machine hits both alike; the figures are medians and the median
// of the pairwise ratios A/B. Every command runs without NODE_EXTRA_CA_CERTS (it adds about 30 ms
// to each node start on these machines). Needs a built tree (`npm ci` builds it) and python3.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mmauth.cjs');

/** The performance targets (README "Performance"). */
const TARGETS = {
  help: { ratio: 1.35 },
  tokenVsNode: { ratio: 1.3 },
  tokenVsGh: { ratio: 1.0 },
  tokenRss: { peakRssMiB: 50 },
  clientCredentialsVsNode: { ratio: 1.4 },
  renewalVsNode: { ratio: 1.8, peakRssMiB: 48 },
  emulator: { requestsPerSecond: 5000, p99Ms: 20 },
  // The sandbox engine (an exact dependency, loaded by --sandbox alone) brings about 19 MB.
  installMB: 35,
  tokenKeyringVsNode: { ratio: 1.7 },
  execOverTokenMs: 15,
  sandboxOverEngineMs: 50,
  // What runs later, walled before and reviewed after: a 50,000-file working directory against an empty one.
  runsLaterScanMs: 20,
  tokenEndpoint: { requestsPerSecond: 5000, p99Ms: 2 },
};

/**
 * A private session bus (dbus-daemon) with the tests' Secret Service (dbus-next, in a child
 * process) on it, for the keyring row; undefined when dbus-daemon is missing. stop() ends both.
 */
async function startSecretService() {
  const dir = join(work, 'bus');
  mkdirSync(dir);
  const socket = join(dir, 'bus');
  writeFileSync(
    join(dir, 'bus.conf'),
    `<busconfig><type>session</type><listen>unix:path=${socket}</listen><auth>EXTERNAL</auth>` +
      '<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>' +
      '<allow own="*"/></policy></busconfig>\n',
  );
  if (whichVersion('dbus-daemon', ['--version']) === undefined) return undefined;
  const daemon = spawn('dbus-daemon', [`--config-file=${join(dir, 'bus.conf')}`, '--nofork', '--print-address'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const address = await new Promise((resolveAddress, reject) => {
    let text = '';
    daemon.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolveAddress(text.trim());
    });
    daemon.on('exit', () => reject(new Error('dbus-daemon exited')));
  });
  const provider = spawn(process.execPath, [join(root, 'test', 'support', 'secret-service', 'provider.cjs')], {
    env: { ...baseEnv, DBUS_SESSION_BUS_ADDRESS: address },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise((resolveReady, reject) => {
    provider.on('message', (message) => message.ready === true && resolveReady());
    provider.on('exit', () => reject(new Error('the Secret Service exited')));
  });
  return {
    address,
    stop: () => {
      provider.kill('SIGKILL');
      daemon.kill('SIGKILL');
    },
  };
}

function parseArguments(argv) {
  const options = { file: 'bench-results.json', pairs: 20, warmup: 3 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--pairs' || arg === '--warmup') {
      const value = Number(argv[(i += 1)]);
      if (!Number.isInteger(value) || value < 0) throw new Error(`${arg} needs a whole number`);
      options[arg.slice(2)] = value;
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg}; usage: npm run bench -- [RESULTS.json] [--pairs N] [--warmup N]`);
    } else {
      options.file = arg;
    }
  }
  if (options.pairs < 15) throw new Error('--pairs must be at least 15');
  return options;
}

const options = parseArguments(process.argv.slice(2));
if (!existsSync(join(root, 'dist', 'mmauth.cjs'))) {
  throw new Error('dist/mmauth.cjs is missing: run `npm ci` (or `npm run build`) first');
}

/** The environment every measured command gets. */
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      key !== 'NODE_EXTRA_CA_CERTS' && !key.startsWith('MMAUTH_') && key !== 'CI' && key !== 'DBUS_SESSION_BUS_ADDRESS',
  ),
);
const work = mkdtempSync(join(tmpdir(), 'mmauth-bench-'));
const log = (line) => process.stderr.write(`${line}\n`);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** A difference in ms, rounded, with its sign (`+3.2`, `−80.8`). */
const signed = (value) => (value < 0 ? `−${round(-value)}` : `+${round(value)}`);

/** Starts `mmauth emulator` as its own process; resolves with its JSON line and a stop function. */
function startEmulator() {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, [BIN, 'emulator', '--port', '0', '--json', '--auto-approve'], {
      env: baseEnv,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let text = '';
    const timer = setTimeout(() => reject(new Error('the emulator did not start within 10 s')), 10_000);
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const newline = text.indexOf('\n');
      if (newline >= 0) {
        clearTimeout(timer);
        resolveStart({ ...JSON.parse(text.slice(0, newline)), pid: child.pid, stop: () => child.kill('SIGINT') });
      }
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
  });
}

/** Runs the commands in `order` through bench/measure.py; resolves with one record per run. */
function measure(commands, order) {
  return new Promise((resolveRuns, reject) => {
    const child = spawn('python3', [join(root, 'bench', 'measure.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    commands = commands.map(({ label, argv, env, input }) => ({ label, argv, env, input: input ?? null }));
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`bench/measure.py exited with ${code}`));
      else
        resolveRuns(
          text
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        );
    });
    child.stdin.end(JSON.stringify({ commands, order }));
  });
}

/** Throws when a run failed (an exit code, or no output from a command that prints), naming it. */
function assertRunsSucceeded(name, commands, runs) {
  for (const run of runs) {
    const command = commands[run.command];
    if (run.exit_code !== 0 || (run.stdout_bytes === 0 && command.isSilent !== true)) {
      throw new Error(`${name}: \`${command.label}\` exited ${run.exit_code} with ${run.stdout_bytes} bytes on stdout`);
    }
  }
}

/**
 * The figures of `a` (command index `ia` in `kept`) against `b` (`ib`): the medians, the median
 * ratio a/b of the runs taken in the same round, and the peak RSS of each.
 */
function summarise(name, a, b, kept, ia, ib) {
  const wall = (index) => kept.filter((run) => run.command === index).map((run) => run.wall_ms);
  const rss = (index) => kept.filter((run) => run.command === index).map((run) => run.max_rss_kib / 1024);
  const [wallA, wallB] = [wall(ia), wall(ib)];
  const ratios = wallA.map((value, i) => value / wallB[i]);
  const result = {
    name,
    a: a.label,
    b: b.label,
    pairs: options.pairs,
    aMedianMs: round(median(wallA)),
    bMedianMs: round(median(wallB)),
    medianRatio: round(median(ratios), 2),
    aPeakRssMiB: round(Math.max(...rss(ia))),
    bPeakRssMiB: round(Math.max(...rss(ib))),
    aMedianRssMiB: round(median(rss(ia))),
  };
  log(`  ${name}: ${result.a} ${result.aMedianMs} ms, ${result.b} ${result.bMedianMs} ms, ratio ${result.medianRatio}`);
  return result;
}

/**
 * Alternates `a` and `b` (each {label, argv, env, input?}) for warm-up + pairs rounds and returns
 * the medians, the median pairwise ratio a/b and the peak RSS of each, warm-up runs left out.
 * Throws when a run fails, so that no figure is ever taken from an error path.
 */
async function comparePair(name, a, b) {
  const rounds = options.warmup + options.pairs;
  const order = Array.from({ length: rounds * 2 }, (_, i) => i % 2);
  const runs = await measure([a, b], order);
  assertRunsSucceeded(name, [a, b], runs);
  return summarise(name, a, b, runs.slice(options.warmup * 2), 0, 1);
}

/**
 * comparePair for several pairs ({name, a, b}) at once: every command of every pair runs once a
 * round, in an order shuffled each round, for warm-up + pairs rounds. A figure taken across rows
 * (the runs-later cost: one row's difference less another's) then carries no drift of the machine
 * between rows measured minutes apart, which here moved one command's median by 60 ms.
 */
async function comparePairsInterleaved(pairs, measured = options.pairs) {
  const commands = pairs.flatMap(({ a, b }) => [a, b]);
  const rounds = options.warmup + measured;
  const order = [];
  for (let round = 0; round < rounds; round += 1) {
    const shuffled = commands.map((_, index) => index);
    for (let i = shuffled.length - 1; i > 0; i -= 1) {
      const j = Math.floor(Math.random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    order.push(...shuffled);
  }
  const runs = await measure(commands, order);
  assertRunsSucceeded(pairs.map(({ name }) => name).join(', '), commands, runs);
  const kept = runs.slice(options.warmup * commands.length);
  const walls = (index) => kept.filter((run) => run.command === index).map((run) => run.wall_ms);
  return pairs.map(({ name, a, b }, index) => {
    const result = { ...summarise(name, a, b, kept, 2 * index, 2 * index + 1), pairs: measured };
    // Each command's walls in round order (runsLaterInterval resamples rounds); not written out.
    Object.defineProperty(result, 'walls', { value: [walls(2 * index), walls(2 * index + 1)] });
    return result;
  });
}

/** One autocannon load (10 connections): a 1 s warm-up, then 5 s measured; the figures kept. */
async function loadFor(options) {
  const { default: autocannon } = await import('autocannon');
  const run = (durationS) => autocannon({ ...options, connections: 10, duration: durationS });
  await run(1); // warm-up: JIT and connection set-up out of the figures
  const result = await run(5);
  return {
    connections: 10,
    durationS: 5,
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** autocannon against the emulator's token endpoint: client-credentials requests. */
async function loadEmulator(emulator) {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: emulator.client_id,
    client_secret: emulator.client_secret,
    scope: 'service',
  }).toString();
  return loadFor({
    url: `${emulator.base_url}/oauth2/token`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

/**
 * `mmauth exec --serve` with a child that only waits, and autocannon against its token endpoint:
 * GET /token with the run's authorization, 10 connections, a fresh token (no renewal).
 */
async function loadTokenEndpoint(env) {
  const file = join(work, 'endpoint');
  const child = spawn(
    process.execPath,
    [
      BIN,
      'exec',
      '--serve',
      '--',
      'sh',
      '-c',
      `echo "$MMAUTH_TOKEN_URL $MMAUTH_TOKEN_URL_AUTHORIZATION" > "${file}"; sleep 60`,
    ],
    { env, stdio: 'ignore' },
  );
  try {
    let line = '';
    for (let i = 0; i < 100 && line === ''; i++) {
      await new Promise((done) => setTimeout(done, 50));
      line = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    }
    const [url, authorization] = line.split(' ');
    return await loadFor({ url, headers: { authorization: `Bearer ${authorization}` } });
  } finally {
    child.kill('SIGTERM');
  }
}

/** Bytes of every file under `path` (apparent size, links not followed). */
function treeBytes(path) {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + treeBytes(join(path, name)), 0);
}

/**
 * The production install: the lock file's dependencies without dev ones (`npm ci --omit=dev`, no
 * scripts: dist comes built, as in the published package) plus the files the package ships (bin,
 * dist). Then it runs the installed copy, to prove it needs nothing from devDependencies.
 */
function measureInstall() {
  const target = join(work, 'install');
  mkdirSync(target);
  for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(target, file));
  execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: target,
    env: baseEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const dependencyBytes = treeBytes(join(target, 'node_modules'));
  for (const part of ['bin', 'dist']) cpSync(join(root, part), join(target, part), { recursive: true });
  const packageBytes =
    treeBytes(join(target, 'bin')) + treeBytes(join(target, 'dist')) + treeBytes(join(target, 'package.json'));
  const config = join(work, 'install-config');
  const env = { ...baseEnv, MMAUTH_CONFIG_DIR: config, MMAUTH_BASE_URL: 'http://127.0.0.1:9' };
  const installed = join(target, 'bin', 'mmauth.cjs');
  execFileSync(process.execPath, [installed, 'login', '--with-token', '--no-verify'], {
    env,
    input: 'install-check-token\n',
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const token = execFileSync(process.execPath, [installed, 'token'], { env, encoding: 'utf8' }).trim();
  if (token !== 'install-check-token')
    throw new Error('the production install did not run: `mmauth token` printed something else');
  const totalBytes = dependencyBytes + packageBytes;
  return {
    dependencyBytes,
    packageBytes,
    totalBytes,
    totalMB: round(totalBytes / 1e6, 2),
    runsWithoutDevDependencies: true,
  };
}

function whichVersion(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')[0]
      .trim();
  } catch {
    return undefined;
  }
}

/**
 * `token` on a stale client-credentials profile (it renews: a new token minted and written under
 * the lock), against `node -e 0`. Each run starts from the same stale config file, copied in by
 * `sh -c 'cp …'`; the `node -e 0` side runs through the same `sh -c 'cp …'`, so that the copy costs
 * both sides alike. A token lifetime only the server's clock could age otherwise.
 */
function staleTokenPair(serverEnv, nodeZero, name = 'config-stale') {
  const dir = join(work, name);
  const env = { ...serverEnv, MMAUTH_CONFIG_DIR: dir, MMAUTH_CREDENTIAL_STORE: 'file' };
  execFileSync(process.execPath, [BIN, 'client-credentials'], { env, stdio: 'ignore' });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const token = config.profiles.default.token;
  const hourAgoMs = Date.now() - 3_600_000;
  token.obtained_at = new Date(hourAgoMs - 7_200_000).toISOString();
  token.expires_at = new Date(hourAgoMs).toISOString();
  const stale = join(work, `${name}.json`);
  writeFileSync(stale, JSON.stringify(config), { mode: 0o600 });
  const copyThen = (command) => ['sh', '-c', `cp "${stale}" "${join(dir, 'config.json')}" && exec ${command}`];
  return [
    { label: 'mmauth token (stale: renews)', argv: copyThen(`"${BIN}" token`), env },
    { ...nodeZero, label: 'node -e 0 (same cp)', argv: copyThen(`"${process.execPath}" -e 0`) },
  ];
}

/** A working directory of 50,000 files (500 directories of 100), made once. */
function fiftyThousandFiles() {
  const big = join(work, 'sandbox-50k');
  for (let d = 0; d < 500; d++) {
    const dir = join(big, 'src', `m${Math.floor(d / 50)}`, `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.ts`), 'x');
  }
  return big;
}

/**
 * The pair for `exec --sandbox -- true` against the engine's floor: the engine's CLI (srt) running
 * `true` under the policy mmauth states for that run (exec --verbose prints it: the config
 * directories hidden, egress to the profile's server, what runs later walled), both in `cwd` (an
 * empty directory of its own unless given). Undefined where the engine cannot run here (a program
 * it needs missing), said on stderr.
 */
/**
 * mmauth's own extra for 50,000 files: (mmauth − engine) in the 50k directory − (mmauth − engine)
 * in an empty one, medians. `row`: sandbox50kVsEngine (a run after another, from the last run's
 * index) or sandbox50kColdVsEngine (no index: every file listed).
 */
function runsLaterCost(byName, row = 'sandbox50kVsEngine') {
  const over = (pair) => pair.aMedianMs - pair.bMedianMs;
  return over(byName[row]) - over(byName.sandboxVsEngine);
}

/**
 * How far runsLaterCost can be trusted: the 5th and 95th percentiles of the same figure over 2,000
 * resamplings of the rounds (with replacement; each round keeps its four runs together), from the
 * interleaved rows' walls. Undefined for rows measured apart.
 */
function runsLaterInterval(byName, row = 'sandbox50kVsEngine') {
  const [tree, empty] = [byName[row]?.walls, byName.sandboxVsEngine?.walls];
  if (tree === undefined || empty === undefined) return undefined;
  const rounds = tree[0].length;
  const costs = [];
  for (let sample = 0; sample < 2_000; sample += 1) {
    const picked = Array.from({ length: rounds }, () => Math.floor(Math.random() * rounds));
    const medianOf = (walls) => median(picked.map((round) => walls[round]));
    costs.push(medianOf(tree[0]) - medianOf(tree[1]) - (medianOf(empty[0]) - medianOf(empty[1])));
  }
  costs.sort((x, y) => x - y);
  return [round(costs[Math.floor(costs.length * 0.05)]), round(costs[Math.floor(costs.length * 0.95)])];
}

/**
 * Before each run of the cold row, both sides: the scan's indexes removed from this user's runtime
 * roots (where exec keeps them), so mmauth lists every file as a first run in a directory does.
 */
const WITHOUT_INDEX = `rm -rf "\${XDG_RUNTIME_DIR:-/nonexistent}"/mmauth-*/scan-index "\${TMPDIR:-/tmp}"/mmauth-*/scan-index; `;

async function sandboxPair(
  serverEnv,
  cwd = join(work, 'sandbox-cwd'),
  settingsName = 'srt-settings.json',
  isCold = false,
) {
  mkdirSync(cwd, { recursive: true });
  let policy;
  try {
    // The policy as exec states it (--verbose prints it), for the engine's CLI to run under.
    const run = spawnSync(process.execPath, [BIN, 'exec', '--sandbox', '--verbose', '--', 'true'], {
      env: serverEnv,
      cwd,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(run.stderr.trim().split('\n')[0] ?? `exit ${run.status}`);
    policy = JSON.parse(/sandbox policy: (\{.*\})/.exec(run.stderr)?.[1] ?? 'null');
  } catch (error) {
    log(`  sandboxVsEngine: skipped (${error.message})`);
    return undefined;
  }
  const settings = join(work, settingsName);
  writeFileSync(
    settings,
    JSON.stringify({
      network: { allowedDomains: policy.allowHosts, deniedDomains: [], strictAllowlist: true },
      filesystem: { denyRead: policy.denyRead, allowWrite: policy.allowWrite, denyWrite: policy.denyWrite },
    }),
  );
  const srt = join(root, 'node_modules', '@anthropic-ai', 'sandbox-runtime', 'dist', 'cli.js');
  const inCwd = (argv) => ['sh', '-c', `${isCold ? WITHOUT_INDEX : ''}cd "$0" && exec "$@"`, cwd, ...argv];
  return [
    {
      label: 'mmauth exec --sandbox -- true',
      argv: inCwd([process.execPath, BIN, 'exec', '--sandbox', '--', 'true']),
      env: serverEnv,
      isSilent: true,
    },
    {
      label: 'srt --settings … true (the engine alone, same policy)',
      argv: inCwd([process.execPath, srt, '--settings', settings, 'true']),
      env: serverEnv,
      isSilent: true,
    },
  ];
}

async function main() {
  const startedMs = Date.now();
  log(`mmauth bench: ${options.pairs} pairs after ${options.warmup} warm-up pairs each, NODE_EXTRA_CA_CERTS unset`);
  const emulator = await startEmulator();
  try {
    // A config holding a token from the emulator, for `token` and `info`.
    const configDir = join(work, 'config');
    const serverEnv = {
      ...baseEnv,
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: emulator.base_url,
      MMAUTH_CLIENT_ID: emulator.client_id,
      MMAUTH_CLIENT_SECRET: emulator.client_secret,
      // The file rows: credentials in the config file, as asked (no keyring probed on the way).
      MMAUTH_CREDENTIAL_STORE: 'file',
    };
    execFileSync(process.execPath, [BIN, 'client-credentials'], { env: serverEnv, stdio: 'ignore' });
    const mmauth = (label, args) => ({ label, argv: [BIN, ...args], env: serverEnv });

    const browser = `${process.execPath} ${join(root, 'dist', 'demo', 'headless-browser.js')}`;
    const results = [];
    const nodeZero = { label: 'node -e 0', argv: [process.execPath, '-e', '0'], env: baseEnv, isSilent: true };
    log('start-up and requests:');
    results.push(await comparePair('help', mmauth('mmauth --help', ['--help']), nodeZero));
    results.push(await comparePair('tokenVsNode', mmauth('mmauth token', ['token']), nodeZero));

    // `token` with its credentials sealed, the key in a Secret Service (the tests' provider on a
    // private bus): the addon's load, a D-Bus session and a search, then AES-GCM.
    const secretService = await startSecretService();
    if (secretService !== undefined) {
      try {
        const keyringEnv = {
          ...serverEnv,
          MMAUTH_CONFIG_DIR: join(work, 'config-keyring'),
          MMAUTH_CREDENTIAL_STORE: 'keyring',
          DBUS_SESSION_BUS_ADDRESS: secretService.address,
        };
        execFileSync(process.execPath, [BIN, 'client-credentials'], { env: keyringEnv, stdio: 'ignore' });
        // The provider is a Node process: its JIT needs a few dozen calls to settle, which a native
        // Secret Service (GNOME Keyring) does not. Warm it before measuring.
        for (let i = 0; i < 30; i++)
          execFileSync(process.execPath, [BIN, 'token'], { env: keyringEnv, stdio: 'ignore' });
        results.push(
          await comparePair(
            'tokenKeyringVsNode',
            { label: 'mmauth token (keyring)', argv: [BIN, 'token'], env: keyringEnv },
            nodeZero,
          ),
        );
        // The write path with the keyring: a minted token stored (sealed, its copy in the keyring),
        // and a renewal (refresh grant, sealed write, the chain's presentation).
        results.push(
          await comparePair(
            'clientCredentialsKeyringVsNode',
            {
              label: 'mmauth client-credentials --replace --json (stored, keyring)',
              argv: [BIN, 'client-credentials', '--profile', 'ci', '--replace', '--json'],
              env: keyringEnv,
            },
            nodeZero,
          ),
        );
        execFileSync(process.execPath, [BIN, 'login', '--profile', 'renewing'], {
          env: { ...keyringEnv, BROWSER: browser },
          stdio: 'ignore',
        });
        results.push(
          await comparePair(
            'renewalKeyringVsNode',
            {
              label: 'mmauth refresh --json (one renewal, keyring)',
              argv: [BIN, 'refresh', '--profile', 'renewing', '--json'],
              env: keyringEnv,
            },
            nodeZero,
          ),
        );
      } finally {
        secretService.stop();
      }
    } else {
      log('  tokenKeyringVsNode: skipped, dbus-daemon is not installed');
    }

    const ghVersion = whichVersion('gh', ['--version']);
    let gh;
    if (ghVersion !== undefined) {
      const ghConfig = join(work, 'gh');
      mkdirSync(ghConfig);
      writeFileSync(
        join(ghConfig, 'hosts.yml'),
        'github.com:\n    oauth_token: gho_benchBenchBenchBenchBenchBenchBench00\n    user: bench\n    git_protocol: https\n',
      );
      gh = {
        label: 'gh auth token',
        argv: ['gh', 'auth', 'token'],
        env: { ...baseEnv, GH_CONFIG_DIR: ghConfig, GH_NO_UPDATE_NOTIFIER: '1', GH_PROMPT_DISABLED: '1' },
      };
      results.push(await comparePair('tokenVsGh', mmauth('mmauth token', ['token']), gh));
    } else {
      log('  tokenVsGh: skipped, gh is not installed (Debian: apt-get install gh)');
    }

    const curlVersion = whichVersion('curl', ['--version']);
    const clientCredentials = mmauth('mmauth client-credentials --no-save --json', [
      'client-credentials',
      '--no-save',
      '--json',
    ]);
    if (curlVersion !== undefined) {
      // The same POST by curl; the form (with the secret) from a file, as mmauth keeps it out of argv too.
      const form = join(work, 'form');
      writeFileSync(
        form,
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: emulator.client_id,
          client_secret: emulator.client_secret,
          scope: 'service',
        }).toString(),
        { mode: 0o600 },
      );
      const curl = {
        label: 'curl (same POST)',
        argv: ['curl', '-sS', '--fail-with-body', '--data', `@${form}`, `${emulator.base_url}/oauth2/token`],
        env: baseEnv,
      };
      results.push(await comparePair('clientCredentialsVsCurl', clientCredentials, curl));
    } else {
      log('  clientCredentialsVsCurl: skipped, curl is not installed');
    }
    results.push(await comparePair('clientCredentialsVsNode', clientCredentials, nodeZero));
    // info reports to people, on stderr: its stdout stays empty.
    results.push(await comparePair('infoVsNode', { ...mmauth('mmauth info', ['info']), isSilent: true }, nodeZero));
    // A renewal on loopback: a code-flow profile with a refresh token; `refresh` renews on every run
    // (the path `token` takes for a stale token: refresh grant, then the new pair written under the lock).
    execFileSync(process.execPath, [BIN, 'login', '--profile', 'renewing'], {
      env: { ...serverEnv, BROWSER: browser },
      stdio: 'ignore',
    });
    const renewal = mmauth('mmauth refresh --json (one renewal)', ['refresh', '--profile', 'renewing', '--json']);
    results.push(await comparePair('renewalVsNode', renewal, nodeZero));
    // A minted token stored in the file (a profile that already holds one: replaced, left to expire).
    results.push(
      await comparePair(
        'clientCredentialsStoreVsNode',
        mmauth('mmauth client-credentials --replace --json (stored, file)', [
          'client-credentials',
          '--profile',
          'ci',
          '--replace',
          '--json',
        ]),
        nodeZero,
      ),
    );
    results.push(await comparePair('staleTokenVsNode', ...staleTokenPair(serverEnv, nodeZero)));
    // With --deadline the renewal runs in an `mmauth token` process of its own (it outlives a caller
    // that stops waiting): the cost of that second process, against the renewal in process.
    const [staleToken] = staleTokenPair(serverEnv, nodeZero, 'config-stale-deadline');
    const withDeadline = {
      ...staleToken,
      label: 'mmauth token --deadline 10 (stale: renews in its own process)',
      argv: staleToken.argv.map((part) => part.replace(/token$/, 'token --deadline 10')),
    };
    results.push(await comparePair('staleTokenDeadlineVsStale', withDeadline, staleToken));
    if (curlVersion !== undefined) {
      // One API call: mmauth api, against the two-process recipe that keeps the token out of argv.
      const me = `${emulator.base_url}/api/me`;
      const api = mmauth('mmauth api /api/me', ['api', '/api/me', '--profile', 'renewing']);
      const recipe = {
        label: 'mmauth header | curl -H @- (same GET)',
        argv: [
          'sh',
          '-c',
          `"${process.execPath}" "${BIN}" header --profile renewing | curl -sS --fail-with-body -H @- "${me}"`,
        ],
        env: serverEnv,
      };
      results.push(await comparePair('apiVsHeaderCurl', api, recipe));
    }

    // The helper contract (issue 34): `token --verify` within its minute asks nothing (a date read
    // from the profile), and `--deadline` on a fresh token costs nothing over `token`.
    execFileSync(process.execPath, [BIN, 'token', '--verify'], { env: serverEnv, stdio: 'ignore' });
    results.push(
      await comparePair(
        'tokenVerifyVsToken',
        mmauth('mmauth token --verify (checked this minute)', ['token', '--verify']),
        mmauth('mmauth token', ['token']),
      ),
    );
    results.push(
      await comparePair(
        'tokenDeadlineVsToken',
        mmauth('mmauth token --deadline 5', ['token', '--deadline', '5']),
        mmauth('mmauth token', ['token']),
      ),
    );

    // exec: its overhead over `token` (the child does nothing), and its token endpoint under load.
    const exec = { ...mmauth('mmauth exec -- true', ['exec', '--', 'true']), isSilent: true };
    results.push(await comparePair('execVsToken', exec, mmauth('mmauth token', ['token'])));
    // exec --sandbox against the engine's own floor: its CLI (srt) running `true` under the same
    // policy (written from mmauth's own plan), both from a working directory of their own.
    const sandboxRow = await sandboxPair(serverEnv);
    // The scan of what runs later (before the child) and the review (after): its cost on 50,000
    // files, over the engine's own in the same directory (the engine searches the tree too). Both
    // rows in the same rounds, since that cost is one row's difference less the other's, and three
    // times the rounds of a row of its own: a difference of four medians, each of runs that vary
    // by 10 to 20 ms here, moved by about 10 ms between benches of 20 rounds.
    const treeRow =
      sandboxRow === undefined ? undefined : await sandboxPair(serverEnv, fiftyThousandFiles(), 'srt-50k.json');
    if (sandboxRow !== undefined && treeRow !== undefined) {
      results.push(
        ...(await comparePairsInterleaved(
          [
            { name: 'sandboxVsEngine', a: sandboxRow[0], b: sandboxRow[1] },
            { name: 'sandbox50kVsEngine', a: treeRow[0], b: treeRow[1] },
          ],
          options.pairs * 3,
        )),
      );
    } else if (sandboxRow !== undefined) {
      results.push(await comparePair('sandboxVsEngine', ...sandboxRow));
    }
    // The same, each run a first one in the directory: no index of the last run's, every file listed.
    const coldRow =
      treeRow === undefined ? undefined : await sandboxPair(serverEnv, join(work, 'sandbox-50k'), 'srt-50k.json', true);
    if (coldRow !== undefined) results.push(await comparePair('sandbox50kColdVsEngine', ...coldRow));
    log('exec --serve token endpoint under autocannon (10 connections, 5 s of GET /token)…');
    const endpoint = await loadTokenEndpoint(serverEnv);
    log(`  ${endpoint.requestsPerSecond} requests/s, p99 ${endpoint.p99Ms} ms, ${endpoint.non2xx} non-2xx`);

    log('emulator under autocannon (10 connections, 5 s of client-credentials requests)…');
    const load = await loadEmulator(emulator);
    log(`  ${load.requestsPerSecond} requests/s, p99 ${load.p99Ms} ms, ${load.non2xx} non-2xx, ${load.errors} errors`);

    log('production install (npm ci --omit=dev)…');
    const install = measureInstall();
    log(`  ${install.totalMB} MB`);

    const byName = Object.fromEntries(results.map((result) => [result.name, result]));
    const verdicts = [
      {
        target: '`mmauth token` / `node -e 0` ≤ 1.3',
        figure: byName.tokenVsNode.medianRatio,
        isMet: byName.tokenVsNode.medianRatio <= TARGETS.tokenVsNode.ratio,
      },
      {
        target: '`mmauth refresh --json` / `node -e 0` ≤ 1.8, peak RSS ≤ 48 MiB',
        figure: `${byName.renewalVsNode.medianRatio}, ${byName.renewalVsNode.aPeakRssMiB} MiB`,
        isMet:
          byName.renewalVsNode.medianRatio <= TARGETS.renewalVsNode.ratio &&
          byName.renewalVsNode.aPeakRssMiB <= TARGETS.renewalVsNode.peakRssMiB,
      },
      {
        target: '`mmauth --help` / `node -e 0` ≤ 1.35',
        figure: byName.help?.medianRatio,
        isMet: byName.help?.medianRatio <= TARGETS.help.ratio,
      },
      {
        target: '`mmauth token` / `gh auth token` ≤ 1.0',
        figure: byName.tokenVsGh?.medianRatio ?? 'gh not installed',
        isMet: byName.tokenVsGh === undefined ? null : byName.tokenVsGh.medianRatio <= TARGETS.tokenVsGh.ratio,
      },
      {
        target: '`mmauth token` with the keyring / `node -e 0` ≤ 1.7',
        figure: byName.tokenKeyringVsNode?.medianRatio ?? 'no dbus-daemon',
        isMet:
          byName.tokenKeyringVsNode === undefined
            ? null
            : byName.tokenKeyringVsNode.medianRatio <= TARGETS.tokenKeyringVsNode.ratio,
      },
      {
        target: '`mmauth token` peak RSS ≤ 50 MiB',
        figure: byName.tokenVsNode.aPeakRssMiB,
        isMet: byName.tokenVsNode.aPeakRssMiB <= TARGETS.tokenRss.peakRssMiB,
      },
      {
        target: '`mmauth client-credentials --no-save --json` / `node -e 0` ≤ 1.4',
        figure: byName.clientCredentialsVsNode.medianRatio,
        isMet: byName.clientCredentialsVsNode.medianRatio <= TARGETS.clientCredentialsVsNode.ratio,
      },
      {
        target: 'emulator ≥ 5,000 requests/s, p99 ≤ 20 ms',
        figure: `${load.requestsPerSecond} req/s, p99 ${load.p99Ms} ms`,
        isMet:
          load.requestsPerSecond >= TARGETS.emulator.requestsPerSecond &&
          load.p99Ms <= TARGETS.emulator.p99Ms &&
          load.non2xx === 0 &&
          load.errors === 0,
      },
      {
        target: '`mmauth exec --sandbox -- true` ≤ the engine alone (`srt … true`) + 50 ms',
        figure:
          byName.sandboxVsEngine === undefined
            ? 'engine unavailable here'
            : `${signed(byName.sandboxVsEngine.aMedianMs - byName.sandboxVsEngine.bMedianMs)} ms`,
        isMet:
          byName.sandboxVsEngine === undefined
            ? null
            : byName.sandboxVsEngine.aMedianMs - byName.sandboxVsEngine.bMedianMs <= TARGETS.sandboxOverEngineMs,
      },
      {
        target:
          'what runs later on 50,000 files (scan and review): `exec --sandbox -- true` over the engine alone in a 50,000-file working directory ≤ the same in an empty one + 20 ms',
        figure:
          byName.sandbox50kVsEngine === undefined || byName.sandboxVsEngine === undefined
            ? 'engine unavailable here'
            : `${signed(runsLaterCost(byName))} ms (90% of resampled rounds: ${runsLaterInterval(byName)?.join(' to ')} ms)`,
        isMet:
          byName.sandbox50kVsEngine === undefined || byName.sandboxVsEngine === undefined
            ? null
            : runsLaterCost(byName) <= TARGETS.runsLaterScanMs,
      },
      {
        target:
          'the same on a first run in the directory (no index of a last run: every file listed), for the record: no target of its own',
        figure:
          byName.sandbox50kColdVsEngine === undefined || byName.sandboxVsEngine === undefined
            ? 'engine unavailable here'
            : `${signed(runsLaterCost(byName, 'sandbox50kColdVsEngine'))} ms`,
        isMet: null,
      },
      {
        target: '`mmauth exec -- true` ≤ `mmauth token` + 15 ms',
        figure: `${signed(byName.execVsToken.aMedianMs - byName.execVsToken.bMedianMs)} ms`,
        isMet: byName.execVsToken.aMedianMs - byName.execVsToken.bMedianMs <= TARGETS.execOverTokenMs,
      },
      {
        target: 'exec token endpoint ≥ 5,000 requests/s, p99 ≤ 2 ms',
        figure: `${endpoint.requestsPerSecond} req/s, p99 ${endpoint.p99Ms} ms`,
        isMet:
          endpoint.requestsPerSecond >= TARGETS.tokenEndpoint.requestsPerSecond &&
          endpoint.p99Ms <= TARGETS.tokenEndpoint.p99Ms &&
          endpoint.non2xx === 0 &&
          endpoint.errors === 0,
      },
      {
        target: 'production install ≤ 35 MB (the sandbox engine about 19 of it)',
        figure: `${install.totalMB} MB`,
        isMet: install.totalMB <= TARGETS.installMB,
      },
    ];

    const lines = [
      '| comparison (A vs B) | A median ms | B median ms | median A/B | A peak RSS MiB | B peak RSS MiB |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...results.map(
        (r) =>
          `| ${r.a} vs ${r.b} | ${r.aMedianMs} | ${r.bMedianMs} | ${r.medianRatio} | ${r.aPeakRssMiB} | ${r.bPeakRssMiB} |`,
      ),
      '',
      `exec --serve token endpoint under autocannon: ${endpoint.requestsPerSecond} requests/s, p50 ${endpoint.p50Ms} ms, p99 ${endpoint.p99Ms} ms, ${endpoint.requests} requests, ${endpoint.non2xx} non-2xx, ${endpoint.errors} errors`,
      `emulator under autocannon: ${load.requestsPerSecond} requests/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms, ${load.requests} requests, ${load.non2xx} non-2xx, ${load.errors} errors`,
      `production install: ${install.totalMB} MB (dependencies ${round(install.dependencyBytes / 1e6, 2)} MB + bin and dist ${round(install.packageBytes / 1e6, 2)} MB)`,
      '',
      '| target | figure | met |',
      '| --- | --- | --- |',
      ...verdicts.map((v) => `| ${v.target} | ${v.figure} | ${v.isMet === null ? 'n/a' : v.isMet ? 'yes' : 'NO'} |`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    const report = {
      date: new Date().toISOString(),
      commit: whichVersion('git', ['-C', root, 'rev-parse', 'HEAD']),
      machine: { node: process.version, cpu: cpus()[0]?.model, cores: cpus().length, gh: ghVersion, curl: curlVersion },
      settings: { pairs: options.pairs, warmupPairs: options.warmup, nodeExtraCaCerts: 'unset' },
      comparisons: results,
      emulator: load,
      execTokenEndpoint: endpoint,
      install,
      targets: verdicts,
      benchSeconds: round((Date.now() - startedMs) / 1000),
    };
    writeFileSync(options.file, `${JSON.stringify(report, null, 2)}\n`);
    log(`figures written to ${resolve(options.file)}`);
  } finally {
    emulator.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
});
