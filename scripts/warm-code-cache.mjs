#!/usr/bin/env node
// Fills the V8 code caches bin/mmauth.cjs compiles the bundle with (run by scripts/build.mjs):
// - dist/cache/<Node version>/mmauth.cjs.cache, shared by every command: the start-up paths (help, the read-only token
//   commands, a sealed profile's keyring path, a write through the store);
// - dist/cache/<Node version>/<command>.cache for `token`, `--help` (as `help`), `exec` (which hands out tokens
//   like `token`) and the write path's commands (client-credentials, refresh): what that command compiles and nothing more (less to
//   deserialize), the HTTP client and the locked write included, run against the built emulator
//   on 127.0.0.1 (issue 26: with the shared cache the write path compiled about 3 ms of code on
//   every run). Each is 0.2 to 0.3 MB of the install, so only where scripts wait on it in a loop.
// Never the developer's keyring (no session bus) and never beyond loopback.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const BIN = join(root, 'bin', 'mmauth.cjs');
const home = mkdtempSync(join(tmpdir(), 'mmauth-build-'));
const baseEnv = {
  ...process.env,
  DBUS_SESSION_BUS_ADDRESS: '',
  MMAUTH_CONFIG_DIR: home,
  MMAUTH_BASE_URL: 'http://127.0.0.1:9',
};
for (const name of Object.keys(baseEnv)) {
  if (/^(MMAUTH_(CLIENT|TOKEN|PROFILE|CREDENTIAL)|BROWSER$|https?_proxy$|HTTPS?_PROXY$|ALL_PROXY$)/i.test(name)) {
    delete baseEnv[name];
  }
}

/** Runs the bin synchronously (no server in this process needs to answer), filling `cache`; failures are paths too. */
function runSync(cache, args, { input, env = {} } = {}) {
  try {
    execFileSync(process.execPath, [BIN, ...args], {
      env: { ...baseEnv, ...env, MMAUTH_BUILD_CODE_CACHE: cache },
      input,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    // exit 4 (no token yet) or 3 (nothing listens) is a path worth caching too
  }
}

/** Runs the bin while this process serves the emulator (so: asynchronously); it must succeed. */
async function run(cache, args, env) {
  await promisify(execFile)(process.execPath, [BIN, ...args], {
    env: { ...baseEnv, ...env, MMAUTH_BUILD_CODE_CACHE: cache },
    timeout: 30_000,
  });
}

/** A sealed profile whose keyring is out of reach: the keyring path `token` takes up to the addon. */
function writeSealedProfile() {
  mkdirSync(home, { recursive: true });
  const zeros = '0'.repeat(32);
  const sealed = {
    base_url: 'http://127.0.0.1:9',
    credential_store: 'keyring',
    token: {
      token_type: 'bearer',
      grant: 'personal',
      obtained_at: new Date(0).toISOString(),
      // The shapes mmauth makes (a copy's account, a 128-bit key id), or the vault skips the keyring.
      access_token_ref: `access-token.${zeros}`,
    },
    sealed: {
      v: 2,
      key_id: zeros,
      nonce: 'AAAAAAAAAAAAAAAA',
      ciphertext: 'AAAAAAAAAAAAAAAAAAAAAA',
      fields: ['access_token'],
    },
  };
  writeFileSync(join(home, 'config.json'), JSON.stringify({ profiles: { sealed } }), { mode: 0o600 });
}

/** The caches of the Node that builds: another Node reads none of them (the launcher's names). */
const cacheDir = join(dist, 'cache', process.version);
/** The code cache of `command` (the launcher's name for it). */
const cacheOf = (command) => join(cacheDir, `${command}.cache`);

/**
 * `token`'s paths into `cache`: no profile (exit 4) and a sealed profile's keyring; then a token
 * stored by `login --with-token`, compiled into `loginCache`. Leaves that token stored.
 */
function warmTokenPaths(cache, loginCache) {
  rmSync(join(home, 'config.json'), { force: true });
  runSync(cache, ['token']);
  writeSealedProfile();
  runSync(cache, ['token', '--profile', 'sealed']);
  rmSync(join(home, 'config.json'));
  runSync(loginCache, ['login', '--with-token', '--no-verify'], { input: 'build-time-token\n' });
}

/** The shared cache: as before per-command caches existed. */
function warmShared() {
  const shared = join(cacheDir, 'mmauth.cjs.cache');
  warmTokenPaths(shared, shared);
  for (const args of [['status'], ['header'], ['token'], ['--help']]) runSync(shared, args);
  rmSync(join(home, 'config.json'), { force: true });
}

/** The per-command caches, against the emulator: each command on the paths the bench and scripts take. */
async function warmCommands() {
  const { startEmulator } = createRequire(import.meta.url)(join(dist, 'emulator.cjs'));
  const emulator = await startEmulator({ port: 0, tokenTtlS: 3600 });
  try {
    const env = {
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      MMAUTH_CREDENTIAL_STORE: 'file',
    };
    const browser = `${process.execPath} ${join(dist, 'demo', 'headless-browser.js')}`;
    // A profile to renew: signed in through the demo's user agent (its cache thrown away).
    await run(join(home, 'scratch.cache'), ['login', '--profile', 'renewing', '--json'], { ...env, BROWSER: browser });
    for (let round = 0; round < 2; round++) {
      await run(cacheOf('client-credentials'), ['client-credentials', '--no-save', '--json'], env);
      await run(cacheOf('client-credentials'), ['client-credentials', '--profile', 'ci', '--replace', '--json'], env);
      await run(cacheOf('refresh'), ['refresh', '--profile', 'renewing', '--json'], env);
      await run(cacheOf('exec'), ['exec', '--profile', 'renewing', '--', process.execPath, '-e', '0'], env);
    }
  } finally {
    await emulator.close();
  }
}

/** `token` (its fresh-token path, file and keyring) and `--help`: the start-up rows, caches of their own. */
function warmStartUp() {
  warmTokenPaths(cacheOf('token'), join(home, 'scratch.cache'));
  for (let round = 0; round < 2; round++) runSync(cacheOf('token'), ['token']);
  for (let round = 0; round < 2; round++) runSync(cacheOf('help'), ['--help']);
  rmSync(join(home, 'config.json'), { force: true });
}

/**
 * `token` through an agent into its cache (the socket's trust check, the protocol's client), against
 * a stand-in agent this process serves on a socket in a private directory: a fresh token's answer.
 */
async function warmAgentPath() {
  const { createServer } = await import('node:http');
  const dir = join(home, 'agent');
  mkdirSync(dir, { mode: 0o700 });
  const socket = join(dir, 'agent.sock');
  const body = JSON.stringify({
    schema_version: 1,
    access_token: 'build-time-token',
    token_type: 'bearer',
    expires_at: null,
    scope: 'service',
    profile: 'default',
    base_url: 'http://127.0.0.1:9',
    grant: 'client_credentials',
  });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(socket, resolve));
  try {
    for (let round = 0; round < 2; round++) await run(cacheOf('token'), ['token'], { MMAUTH_AGENT_SOCK: socket });
  } finally {
    server.close();
  }
}

rmSync(join(dist, 'cache'), { recursive: true, force: true });
mkdirSync(cacheDir, { recursive: true });
try {
  warmShared();
  warmStartUp();
  try {
    await warmAgentPath();
  } catch (error) {
    process.stderr.write(
      `warning: the agent path of token's code cache was not warmed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})\n`,
    );
  }
  try {
    await warmCommands();
  } catch (error) {
    // The caches only make those commands faster: a build where loopback cannot serve goes on
    // without them (the shared cache serves instead), never fails for them.
    for (const command of ['client-credentials', 'refresh', 'exec']) {
      rmSync(cacheOf(command), { force: true });
    }
    process.stderr.write(
      `warning: the write path's code caches were not built (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); mmauth works without them, a few ms slower\n`,
    );
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
