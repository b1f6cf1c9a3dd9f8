#!/usr/bin/env node
// `node bench/proxy.mjs`: the proxy's rows of `npm run bench` (issue 33). The emulator runs in a
// process of its own (`mmauth emulator`), so that the load generator, the proxy and the server do
// not share an event loop: autocannon (10 connections, 5 s after a 1 s warm-up, at a fixed 1,000 req/s
// for latency and unbounded for throughput) against GET /api/me
// sent directly with the token, and through `mmauth proxy`; then 1,000 requests through the proxy
// while the emulator issues 2-second tokens (three renewals or more), counting what failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'mmauth.cjs');
const TARGETS = { p50OverheadMs: 1, p99OverheadMs: 2 };
const { default: autocannon } = await import('autocannon');

const work = mkdtempSync(join(tmpdir(), 'mmauth-bench-proxy-'));
const baseEnv = { ...process.env, MMAUTH_CREDENTIAL_STORE: 'file' };
delete baseEnv.NODE_EXTRA_CA_CERTS;
const children = [];

/** Spawns mmauth; resolves with the first stdout line matching `pattern` (the child keeps running). */
function startLine(args, env, pattern) {
  return new Promise((resolveLine, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) resolveLine(match[0]);
    });
    child.on('exit', (code) => reject(new Error(`mmauth ${args[0]} exited ${code}`)));
  });
}
const run = (args, env) =>
  new Promise((resolveRun) => spawn(process.execPath, [BIN, ...args], { env, stdio: 'ignore' }).on('exit', resolveRun));

async function setUp(tokenTtlS) {
  const emulator = JSON.parse(
    await startLine(
      ['emulator', '--port', '0', '--json', '--auto-approve', '--token-ttl', String(tokenTtlS)],
      baseEnv,
      /\{.*\}\n/,
    ),
  );
  const configDir = mkdtempSync(join(work, 'config-'));
  const env = {
    ...baseEnv,
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_BASE_URL: emulator.base_url,
    MMAUTH_CLIENT_ID: emulator.client_id,
    MMAUTH_CLIENT_SECRET: emulator.client_secret,
    BROWSER: `${process.execPath} ${join(root, 'dist', 'demo', 'headless-browser.js')}`,
  };
  await run(['login'], env);
  const proxyEnv = { ...env };
  delete proxyEnv.MMAUTH_BASE_URL;
  const proxy = JSON.parse(await startLine(['proxy', '--json'], proxyEnv, /\{"schema_version":1,"url":"[^"]+"\}/)).url;
  const token = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles.default.token.access_token;
  return { emulator, proxy, token };
}

/**
 * 10 connections at a fixed 1,000 requests a second in all (latency: below what either path can
 * carry, so that the figure is the hop's cost, not a queue's), or as fast as they go (`rate` 0:
 * throughput, where a queue forms and latency is the queue's).
 */
async function load(options, rate) {
  const go = (durationS) =>
    autocannon({
      ...options,
      connections: 10,
      duration: durationS,
      ...(rate > 0 ? { connectionRate: rate / 10 } : {}),
    });
  await go(1);
  const result = await go(5);
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: Math.round(result.requests.average),
    non2xx: result.non2xx,
  };
}

try {
  const long = await setUp(7200);
  const directOptions = { url: `${long.emulator.base_url}/api/me`, headers: { authorization: `Bearer ${long.token}` } };
  const direct = await load(directOptions, 1000);
  const proxied = await load({ url: `${long.proxy}/api/me` }, 1000);
  const directMax = await load(directOptions, 0);
  const proxiedMax = await load({ url: `${long.proxy}/api/me` }, 0);
  const p50 = proxied.p50 - direct.p50;
  const p99 = proxied.p99 - direct.p99;
  const short = await setUp(2);
  let failures = 0;
  const started = Date.now();
  for (let i = 0; i < 1000; i++) {
    const answer = await fetch(`${short.proxy}/api/me`);
    if (answer.status !== 200) failures += 1;
    await answer.arrayBuffer();
    await new Promise((resolveWait) => setTimeout(resolveWait, 5));
  }
  const seconds = (Date.now() - started) / 1000;
  console.log('\n| proxy row | measured | target | |\n| --- | --- | --- | --- |');
  console.log(
    `| GET /api/me through the proxy vs direct with the token (autocannon, 10 connections, 1,000 req/s in all) | p50 ${proxied.p50} vs ${direct.p50} ms, p99 ${proxied.p99} vs ${direct.p99} ms (${proxied.non2xx + direct.non2xx} not 2xx) | p50 +${TARGETS.p50OverheadMs} ms, p99 +${TARGETS.p99OverheadMs} ms | ${p50 <= TARGETS.p50OverheadMs && p99 <= TARGETS.p99OverheadMs ? 'met' : 'NOT met'} |`,
  );
  console.log(
    `| the same as fast as 10 connections go (throughput; latency is then the queue's) | ${proxiedMax.rps} vs ${directMax.rps} req/s; p50 ${proxiedMax.p50} vs ${directMax.p50} ms, p99 ${proxiedMax.p99} vs ${directMax.p99} ms | | |`,
  );
  console.log(
    `| 1,000 requests through the proxy over ${seconds.toFixed(1)} s of 2-second tokens (about ${Math.floor(seconds)} renewals) | ${failures} failed | 0 | ${failures === 0 ? 'met' : 'NOT met'} |`,
  );
} finally {
  for (const child of children) child.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
}
