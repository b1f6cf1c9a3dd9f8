#!/usr/bin/env node
// `node bench/library.mjs`: the library's rows of `npm run bench` (issue 32). In one process, against
// the built emulator: a fresh getToken() (median and p99 of 10,000 calls after the first), a renewal
// through getToken() beside the same requests (refresh grant, then the new token presented at token
// info) made by bare node:http, and by bare node:http that also stores the new pair durably (conf's
// write) before presenting it, and a program that asks per request against one that spawns `mmauth
// token` per request. Needs a built tree (`npm ci` builds it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mmauth.cjs');
const TARGETS = { freshMedianUs: 50, freshP99Us: 500, renewalRatio: 1.2 };

const { startEmulator } = await import(join(root, 'dist', 'emulator', 'index.js'));
const { getToken } = await import(join(root, 'dist', 'index.js'));

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const nowUs = () => Number(process.hrtime.bigint()) / 1000;

const work = mkdtempSync(join(tmpdir(), 'mmauth-bench-library-'));
const emulator = await startEmulator({ port: 0, autoApprove: true });
const configDir = join(work, 'config');
const env = {
  ...process.env,
  MMAUTH_CONFIG_DIR: configDir,
  MMAUTH_BASE_URL: emulator.baseUrl,
  MMAUTH_CLIENT_ID: emulator.client.clientId,
  MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
  MMAUTH_CREDENTIAL_STORE: 'file',
  BROWSER: `${process.execPath} ${join(root, 'dist', 'demo', 'headless-browser.js')}`,
};
delete env.NODE_EXTRA_CA_CERTS;
// `login` in a child: the emulator answers from this process, so the child runs while we wait.
const { spawn } = await import('node:child_process');
const login = (profile) =>
  new Promise((resolveLogin, reject) => {
    const child = spawn(process.execPath, [BIN, 'login', '--profile', profile], { env, stdio: 'ignore' });
    child.on('exit', (code) => (code === 0 ? resolveLogin() : reject(new Error(`login exited ${code}`))));
  });
// `default` for the library; `bare` only for its refresh token: the bare script's own grant.
await login('default');
await login('bare');
const libraryEnv = {
  MMAUTH_CONFIG_DIR: configDir,
  MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
  MMAUTH_PROFILE: '',
  MMAUTH_TOKEN: '',
  MMAUTH_BASE_URL: '',
};
const rows = [];

// 1. A fresh token, asked 10,000 times.
await getToken({ env: libraryEnv });
const fresh = [];
for (let i = 0; i < 10_000; i++) {
  const start = nowUs();
  await getToken({ env: libraryEnv });
  fresh.push(nowUs() - start);
}
const freshMedian = quantile(fresh, 0.5);
const freshP99 = quantile(fresh, 0.99);
rows.push([
  'getToken(), fresh (10,000 calls after the first)',
  `median ${freshMedian.toFixed(1)} µs, p99 ${freshP99.toFixed(1)} µs`,
  `≤ ${TARGETS.freshMedianUs} µs, ≤ ${TARGETS.freshP99Us} µs`,
  freshMedian <= TARGETS.freshMedianUs && freshP99 <= TARGETS.freshP99Us ? 'met' : 'NOT met',
]);

// 2. A renewal: the library (stale token: refresh, locked write, presentation, record cleared) vs bare node:http (the two requests).
function makeStale() {
  const path = join(configDir, 'config.json');
  const config = JSON.parse(readFileSync(path, 'utf8'));
  const token = config.profiles.default.token;
  token.obtained_at = new Date(Date.now() - 7_199_000).toISOString();
  token.expires_at = new Date(Date.now() + 1_000).toISOString();
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return token.refresh_token;
}
function call(method, path, headers, body) {
  return new Promise((resolveCall, reject) => {
    const url = new URL(path, emulator.baseUrl);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolveCall(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}
/** The durable write a rotated refresh token needs (conf: a temporary file, fsync, rename), in a directory of its own. */
const { default: Conf } = await import('conf');
const durable = new Conf({
  projectName: 'mmauth',
  cwd: join(work, 'bare-durable'),
  configName: 'config',
  configFileMode: 0o600,
});
async function bareRenewal(refreshToken, isDurable = false) {
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: emulator.client.clientId,
    client_secret: emulator.client.clientSecret,
  }).toString();
  const answer = JSON.parse(
    await call(
      'POST',
      '/oauth2/token',
      { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) },
      form,
    ),
  );
  // The new pair stored before the new token is presented (the presentation ends the previous refresh token).
  if (isDurable) durable.store = { token: answer };
  await call('GET', '/oauth2/token/info', { authorization: `Bearer ${answer.access_token}` });
  return answer;
}
const library = [];
const bare = [];
const bareDurable = [];
// The bare script renews a grant of its own (profile `bare`'s), so that the profile's chain stays whole.
let bareRefreshToken = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles.bare.token
  .refresh_token;
for (let i = 0; i < 30; i++) {
  makeStale();
  let start = nowUs();
  await getToken({ env: libraryEnv });
  library.push(nowUs() - start);
  start = nowUs();
  bareRefreshToken = (await bareRenewal(bareRefreshToken)).refresh_token;
  bare.push(nowUs() - start);
  start = nowUs();
  bareRefreshToken = (await bareRenewal(bareRefreshToken, true)).refresh_token;
  bareDurable.push(nowUs() - start);
}
const renewalRatio = quantile(library, 0.5) / quantile(bare, 0.5);
rows.push([
  'getToken() renewing (refresh, locked write, presentation) vs bare node:http (refresh, presentation)',
  `${(quantile(library, 0.5) / 1000).toFixed(2)} ms vs ${(quantile(bare, 0.5) / 1000).toFixed(2)} ms: ${renewalRatio.toFixed(2)}×`,
  `≤ ${TARGETS.renewalRatio}×`,
  renewalRatio <= TARGETS.renewalRatio ? 'met' : 'NOT met',
]);
rows.push([
  'the same beside bare node:http that also stores the new pair durably (one conf write: fsync, rename) before presenting it',
  `${(quantile(library, 0.5) / 1000).toFixed(2)} ms vs ${(quantile(bareDurable, 0.5) / 1000).toFixed(2)} ms: ${(quantile(library, 0.5) / quantile(bareDurable, 0.5)).toFixed(2)}×`,
  '',
  '',
]);

// 3. Per request: the library asked before each of 50 API calls, against spawning `mmauth token` before each.
async function perRequest(tokenFor) {
  const start = nowUs();
  for (let i = 0; i < 50; i++) {
    const token = await tokenFor();
    await call('GET', '/api/me', { authorization: `Bearer ${token}` });
  }
  return (nowUs() - start) / 50;
}
const spawnEnv = { ...env };
delete spawnEnv.MMAUTH_BASE_URL;
const withLibrary = await perRequest(async () => (await getToken({ env: libraryEnv })).accessToken);
const withSpawn = await perRequest(
  () =>
    new Promise((resolveToken) => {
      const child = spawn(process.execPath, [BIN, 'token'], { env: spawnEnv, stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.on('close', () => resolveToken(out.trim()));
    }),
);
rows.push([
  'a request that asks for its token first: library vs spawning `mmauth token` (50 requests each)',
  `${(withLibrary / 1000).toFixed(2)} ms vs ${(withSpawn / 1000).toFixed(2)} ms a request`,
  '',
  `${(withSpawn / withLibrary).toFixed(0)}× cheaper`,
]);

await emulator.close();
rmSync(work, { recursive: true, force: true });
console.log('\n| library row | measured | target | |\n| --- | --- | --- | --- |');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
