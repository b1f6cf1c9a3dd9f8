#!/usr/bin/env node
'use strict';
// First, before anything else: SIGUSR1 would open Node's inspector on 127.0.0.1:9229 with no
// authentication, to every local user (attacks N1). A listener of our own means no signal ever does.
process.on('SIGUSR1', () => undefined);
// Launcher only: all logic is in the bundle dist/mmauth.cjs, built by `npm run build` (which
// `npm ci` runs). Two choices here make start-up fast (issue 6, measured on Node 20):
// - CommonJS, not an ES module: an ES module entry starts Node's ES module loader (about 4 ms);
// - the bundle is compiled with the V8 code cache the build made, which spares parsing and
//   compiling it (about 6 ms). The caches live under dist/cache/<Node version>/: another Node
//   finds none of its own and compiles the bundle as usual (V8 would refuse another version's cache
//   anyway, after reading it); a damaged cache is refused the same way.
const { readFileSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const file = join(__dirname, '..', 'dist', 'mmauth.cjs');
// A command the build warmed has a code cache of its own (what it compiles, nothing more: less to
// deserialize, and its write path included); any other run takes the shared one. The build names
// the cache it is filling in MMAUTH_BUILD_CODE_CACHE.
const word = process.argv[2] ?? '';
const command = word === '--help' || word === '-h' ? 'help' : word;
const cacheDir = join(__dirname, '..', 'dist', 'cache', process.version);
const ownCache = /^[a-z][a-z-]{0,31}$/.test(command) ? join(cacheDir, `${command}.cache`) : '';
const buildCache = process.env.MMAUTH_BUILD_CODE_CACHE;
let cacheFile = buildCache || join(cacheDir, 'mmauth.cjs.cache');
let cachedData;
if (!buildCache && ownCache !== '') {
  try {
    cachedData = readFileSync(ownCache);
    cacheFile = ownCache;
  } catch {
    cachedData = undefined;
  }
}
try {
  cachedData ??= readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
let source;
try {
  // The build makes the bundle ASCII (esbuild escapes the rest), so Latin-1 reads it as is, without
  // UTF-8 decoding.
  source = readFileSync(file, 'latin1');
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
  // A clone that was never built: say what to run, not a stack trace.
  process.stderr.write('error: mmauth is not built yet: run `npm ci` (or `npm run build`) in its directory first\n');
  process.exit(1);
}
const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: file,
  cachedData,
});
if (process.env.MMAUTH_DEBUG_CODE_CACHE === '1') {
  // For the build's checks and the tests: which cache this start-up compiled with.
  const verdict = cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  process.stderr.write(`code cache: ${verdict} ${cachedData === undefined ? cacheDir : cacheFile}\n`);
}
if (buildCache) {
  // Set only by the build, which runs typical commands and keeps what V8 compiled for them.
  process.once('exit', () => {
    try {
      writeFileSync(cacheFile, script.createCachedData());
    } catch (error) {
      process.exitCode = 1;
      require('node:fs').writeSync(2, `cannot write ${cacheFile}: ${error.message}\n`);
    }
  });
}
const bundle = { exports: {} };
// module.constructor is the CommonJS loader's Module: its createRequire spares loading node:module.
script.runInThisContext()(bundle.exports, module.constructor.createRequire(file), bundle, file, dirname(file));
bundle.exports.main(process.argv, bundle.exports.VERSION);
