#!/usr/bin/env node
// `node bench/proxy.mjs`: the proxy's rows of `npm run bench` (issue 33). The emulator runs in a
// process of its own (`mmauth emulator`), so that the load generator, the proxy and the server do
// not share an event loop. GET /api/me is sent three ways: directly with the token, through
// `mmauth proxy`, and through bench/bare-proxy.mjs (the floor: the least a node:http reverse proxy
// does), with autocannon (10 connections, 5 s after a 1 s warm-up) at a fixed 1,000 req/s in three
// interleaved rounds, each way first once (the median round's figures: the load, the proxy and the
// server share two cores here, and one round's tail is the scheduler's), then unbounded
// (throughput); and one connection sequentially, timed in µs (autocannon counts whole ms). Then
// 1,000 requests through the proxy while the emulator issues 2-second tokens (three renewals or
// more), counting failures.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
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

/** Spawns mmauth (or `script`); resolves with the first stdout line matching `pattern` (the child keeps running). */
function startLine(args, env, pattern, script = BIN) {
  return new Promise((resolveLine, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
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
  const proxy = JSON.parse(await startLine(['proxy', '--json'], proxyEnv, /\{"schema_version":1,"url":.*\}\n/)).url;
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

/**
 * `count` GETs one after another over one kept-alive connection, or (`fresh`) each on a new
 * connection: p50 and p99 in µs.
 */
async function oneByOne(options, count, fresh = false) {
  const url = new URL(options.url);
  const agent = fresh ? new Agent({ keepAlive: false }) : new Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await new Promise((resolveGet, reject) => {
      const req = request(
        { hostname: url.hostname, port: url.port, path: url.pathname, agent, headers: options.headers ?? {} },
        (res) => {
          res.resume();
          res.on('end', resolveGet);
        },
      );
      req.on('error', reject);
      req.end();
    });
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  agent.destroy();
  times.sort((a, b) => a - b);
  return { p50: Math.round(times[Math.floor(count * 0.5)]), p99: Math.round(times[Math.floor(count * 0.99)]) };
}

try {
  const long = await setUp(7200);
  const bare = JSON.parse(
    await startLine(
      [long.emulator.base_url, long.token],
      baseEnv,
      /\{"url":"[^"]+"\}/,
      join(root, 'bench', 'bare-proxy.mjs'),
    ),
  ).url;
  const ways = {
    direct: { url: `${long.emulator.base_url}/api/me`, headers: { authorization: `Bearer ${long.token}` } },
    proxied: { url: `${long.proxy}/api/me` },
    bare: { url: `${bare}/api/me` },
  };
  const rounds = { direct: [], proxied: [], bare: [] };
  // Each way goes first, second and third once: a round's place in the run is no one's advantage.
  const order = Object.keys(ways);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < order.length; i++) {
      const way = order[(round + i) % order.length];
      rounds[way].push(await load(ways[way], 1000));
    }
  }
  const median = (way, field) => rounds[way].map((r) => r[field]).sort((a, b) => a - b)[1];
  const fixed = Object.fromEntries(
    Object.keys(ways).map((way) => [
      way,
      { p50: median(way, 'p50'), p99: median(way, 'p99'), non2xx: rounds[way].reduce((n, r) => n + r.non2xx, 0) },
    ]),
  );
  const max = {};
  for (const way of Object.keys(ways)) max[way] = await load(ways[way], 0);
  const sequential = {};
  for (const way of Object.keys(ways)) sequential[way] = await oneByOne(ways[way], 2000);
  const fresh = {};
  for (const way of Object.keys(ways)) fresh[way] = await oneByOne(ways[way], 500, true);
  const p50 = fixed.proxied.p50 - fixed.direct.p50;
  const p99 = fixed.proxied.p99 - fixed.direct.p99;
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
  const trio = (figure) => `${figure('proxied')} vs ${figure('direct')} (floor ${figure('bare')})`;
  console.log(
    '\n| proxy row | measured: proxy vs direct (floor: a bare node:http proxy) | target | |\n| --- | --- | --- | --- |',
  );
  console.log(
    `| GET /api/me, autocannon, 10 connections, 1,000 req/s in all (median of 3 interleaved rounds) | p50 ${trio((w) => fixed[w].p50)} ms, p99 ${trio((w) => fixed[w].p99)} ms (${fixed.proxied.non2xx + fixed.direct.non2xx} not 2xx) | p50 +${TARGETS.p50OverheadMs} ms, p99 +${TARGETS.p99OverheadMs} ms | ${p50 <= TARGETS.p50OverheadMs && p99 <= TARGETS.p99OverheadMs ? 'met' : 'NOT met'} |`,
  );
  console.log(
    `| one connection, 2,000 requests one after another (µs) | p50 ${trio((w) => sequential[w].p50)} µs, p99 ${trio((w) => sequential[w].p99)} µs | | |`,
  );
  console.log(
    `| a new connection for each of 500 requests, one after another (µs; the proxy judges each connection's peer) | p50 ${trio((w) => fresh[w].p50)} µs, p99 ${trio((w) => fresh[w].p99)} µs | | |`,
  );
  console.log(
    `| as fast as 10 connections go (throughput; latency is then the queue's) | ${trio((w) => max[w].rps)} req/s; p99 ${trio((w) => max[w].p99)} ms | | |`,
  );
  console.log(
    `| 1,000 requests through the proxy over ${seconds.toFixed(1)} s of 2-second tokens (about ${Math.floor(seconds)} renewals) | ${failures} failed | 0 | ${failures === 0 ? 'met' : 'NOT met'} |`,
  );
} finally {
  for (const child of children) child.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
}
