#!/usr/bin/env node
// Builds dist/ (run by `npm run build`, which `npm ci` runs through `prepare`):
// 1. tsc: ES modules and declarations, for the `mmauth/emulator` export and the demo.
// 2. esbuild: the command-line program as one CommonJS bundle, dist/mmauth.cjs, which
//    bin/mmauth.cjs compiles with V8's code cache. Why this shape (Node 20):
//    an ES module anywhere starts Node's ES module loader (about 4 ms), one file parses faster
//    than forty, and a code cache spares most of the compiling (about 6 ms). So the bundle holds
//    no import() at all: every package loads through a lazy require() where it is used:
//    - bundled: commander (+ its typed wrapper) and env-paths, needed at start-up;
//    - CommonJS packages, required lazily from node_modules: undici, proper-lockfile, @inquirer/*;
//    - ES-only packages, vendored as CommonJS files under dist/vendor: oauth4webapi, chalk, conf,
//      open (open's own xdg-open script is copied beside it, where it looks for it);
//    - our own split points: the emulator, dist/emulator.cjs, loaded only by `mmauth emulator`,
//      and exec's watchdog, dist/watchdog.cjs, a process of its own.
// 3. The code cache: bin/mmauth.cjs runs a few read-only commands with MMAUTH_BUILD_CODE_CACHE=1
//    and keeps what V8 compiled for them in dist/cache/<Node version>/mmauth.cjs.cache.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const isVerbose = process.argv.includes('--verbose');
// Source maps only on request (`npm run build -- --sourcemap`): nothing at run time reads them, and
// they would be a twentieth of the production install.
const withSourceMaps = process.argv.includes('--sourcemap');

/** How each package the bundle imports is loaded: `default` when the code imports only its default export. */
const PACKAGES = {
  undici: { from: 'undici' },
  '@napi-rs/keyring': { from: '@napi-rs/keyring' },
  '@inquirer/password': { from: '@inquirer/password', isDefaultOnly: true },
  '@inquirer/input': { from: '@inquirer/input', isDefaultOnly: true },
  '@inquirer/checkbox': { from: '@inquirer/checkbox', isDefaultOnly: true },
  oauth4webapi: { from: './vendor/oauth4webapi.cjs', vendor: 'oauth4webapi' },
  chalk: { from: './vendor/chalk.cjs', vendor: 'chalk' },
  open: { from: './vendor/open.cjs', vendor: 'open', isDefaultOnly: true },
  '../emulator/emulator.js': { from: './emulator.cjs' },
  // exec --sandbox's engine (ESM, loaded by require() as Node 20.19+ allows): only that command loads it.
  // Its manager module, not the package's index (which adds config schemas mmauth never uses).
  '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js': {
    from: '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js',
  },
};

rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);

/**
 * The declarations the package serves: those of its two exports (`mmauth`, `mmauth/emulator`) and
 * what they import, nothing else. tsc declares every module the library's code reaches, among them
 * the declarations of settings and context that no public type names.
 */
function pruneDeclarations() {
  const kept = new Set();
  const visit = (file) => {
    if (kept.has(file) || !existsSync(file)) return;
    kept.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
      visit(join(dirname(file), `${match[1]}.d.ts`));
    }
  };
  visit(join(dist, 'index.d.ts'));
  visit(join(dist, 'emulator', 'index.d.ts'));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.d.ts') && !kept.has(path)) rmSync(path);
    }
  };
  walk(dist);
}
pruneDeclarations();

/**
 * `@napi-rs/keyring` straight from its platform package (its index.js first reads package files
 * and checks for musl: about 2.5 ms on every run that opens the keyring), falling back to the
 * package itself where the guess is wrong. npm installs only the platform package that matches.
 */
const KEYRING_STUB = `
const { platform, arch } = process;
const abis = { linux: arch === 'arm' ? ['gnueabihf'] : ['gnu', 'musl'], win32: ['msvc'] }[platform] ?? [''];
let addon;
for (const abi of abis) {
  try {
    addon = require('@napi-rs/keyring-' + platform + '-' + arch + (abi ? '-' + abi : ''));
    break;
  } catch {}
}
module.exports = addon ?? require('@napi-rs/keyring');
`;

/**
 * Resolves each import in PACKAGES (and each dynamic import of a `node:` module) to a small
 * CommonJS stub that require()s it at first use, relative to dist/mmauth.cjs. `isDefaultOnly`
 * stubs export the default itself, since esbuild hands an importer in a "type": "module" package
 * the whole module.exports as the default, as Node does.
 */
const lazyRequires = {
  name: 'lazy-requires',
  setup(build) {
    build.onResolve({ filter: /.*/, namespace: 'file' }, (args) => {
      if (Object.hasOwn(PACKAGES, args.path) || (args.kind === 'dynamic-import' && args.path.startsWith('node:'))) {
        return { path: args.path, namespace: 'lazy-require' };
      }
      return undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-require' }, (args) => {
      if (args.path === '@napi-rs/keyring') return { contents: KEYRING_STUB, loader: 'js', resolveDir: root };
      const spec = PACKAGES[args.path] ?? { from: args.path };
      const contents =
        spec.isDefaultOnly === true
          ? `module.exports = require(${JSON.stringify(spec.from)}).default;`
          : `module.exports = require(${JSON.stringify(spec.from)});`;
      return { contents, loader: 'js', resolveDir: root };
    });
    build.onResolve({ filter: /.*/, namespace: 'lazy-require' }, (args) => ({ path: args.path, external: true }));
  },
};

/** commander requires node:child_process (about 3 ms) for executable subcommands, which mmauth has none of. */
const lazyChildProcessInCommander = {
  name: 'lazy-child-process-in-commander',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'child_process', namespace: 'lazy-child-process' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};

/**
 * The write path loads only what it uses (issue 26). conf and proper-lockfile are bundled, so the
 * bundle's code cache covers them, with three parts left out:
 * - conf's schema validator (ajv, ajv-formats), migrations (semver), encryption and defaults check
 *   (node:crypto and node:assert, loaded on first use instead): mmauth passes no schema,
 *   migrations, encryptionKey or defaults, and the validator alone cost about 10 ms to load. Using one of them throws, so a change that needs it
 *   fails its first test rather than silently skipping a check.
 * - proper-lockfile's graceful-fs, which patches fs on load (about 4 ms) to queue opens past EMFILE,
 *   a limit a command holding three files never meets: plain node:fs, which config-lock.ts also
 *   passes as proper-lockfile's documented `fs` option.
 * Each patch must match exactly (conf CONF_VERSION), or the build fails.
 */
const CONF_VERSION = /^15\./;
const CONF_IMPORTS = [
  [
    "import crypto from 'node:crypto';",
    "const crypto = new Proxy({}, { get: (_, key) => require('node:crypto')[key] });",
  ],
  // conf compares the file's store with itself plus the defaults (none here: a shallow copy), which
  // is equal whenever the two hold the same values under the same keys; node:assert only otherwise.
  [
    "import assert from 'node:assert';",
    'const assert = { deepEqual(actual, expected) { const keys = Object.keys(actual); ' +
      'if (keys.length === Object.keys(expected).length && keys.every((key) => Object.is(actual[key], expected[key]))) return; ' +
      "require('node:assert').deepEqual(actual, expected); } };",
  ],
  [
    "import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';",
    "const Ajv = class { constructor() { throw new Error('mmauth bundles conf without its schema validator'); } };",
  ],
  ["import ajvFormatsModule from 'ajv-formats';", 'const ajvFormatsModule = { default: () => undefined };'],
  [
    "import semver from 'semver';",
    "const semver = new Proxy({}, { get: () => { throw new Error('mmauth bundles conf without migrations'); } });",
  ],
];
const leanWritePath = {
  name: 'lean-write-path',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]conf[\\/]dist[\\/]source[\\/]index\.js$/ }, (args) => {
      const { version } = JSON.parse(readFileSync(join(args.path, '../../../package.json'), 'utf8'));
      if (!CONF_VERSION.test(version)) throw new Error(`conf ${version}: re-check the patches in scripts/build.mjs`);
      let contents = readFileSync(args.path, 'utf8');
      for (const [from, to] of CONF_IMPORTS) {
        if (!contents.includes(from)) throw new Error(`conf ${version} no longer has: ${from}`);
        contents = contents.replace(from, to);
      }
      const asserts = new Set(contents.match(/\bassert\.\w+/g));
      if ([...asserts].some((use) => use !== 'assert.deepEqual'))
        throw new Error(`conf ${version} uses ${[...asserts]}`);
      return { contents, loader: 'js' };
    });
    build.onResolve({ filter: /^graceful-fs$/ }, (args) =>
      /[\\/]node_modules[\\/]proper-lockfile[\\/]/.test(args.importer)
        ? { path: 'graceful-fs', namespace: 'plain-fs' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'plain-fs' }, () => ({
      contents: "module.exports = require('node:fs');",
      loader: 'js',
    }));
    // signal-exit (proper-lockfile's) takes node:assert (about 1.5 ms to load) for one check of its
    // argument; node:assert loads only when that check fails.
    build.onResolve({ filter: /^assert$/ }, (args) =>
      /[\\/]node_modules[\\/](proper-lockfile[\\/]node_modules[\\/])?signal-exit[\\/]/.test(args.importer)
        ? { path: 'assert', namespace: 'lazy-assert' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-assert' }, () => ({
      contents:
        "module.exports = { equal(actual, expected, message) { if (actual != expected) require('node:assert').equal(actual, expected, message); } };",
      loader: 'js',
    }));
  },
};

/**
 * An ES module in node_modules that takes a built-in's default export (`import process from
 * 'node:process'`) gets it as is, not through esbuild's __toESM, which copies every property of the
 * built-in onto a namespace object at load: about 0.7 ms for env-paths alone, on every command.
 * Only for importers that take nothing else from that built-in (a named import needs the namespace).
 */
const builtinDefaults = {
  name: 'builtin-defaults',
  setup(build) {
    build.onResolve({ filter: /^node:[a-z_]+$/ }, (args) => {
      if (args.kind !== 'import-statement' || !/[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      const source = readFileSync(args.importer, 'utf8');
      const quoted = `['"]${args.path}['"]`;
      const isDefaultOnly =
        new RegExp(`import\\s+[A-Za-z_$][\\w$]*\\s+from\\s+${quoted}`).test(source) &&
        !new RegExp(`import\\s*(\\{|\\*|[A-Za-z_$][\\w$]*\\s*,)[^;]*from\\s+${quoted}`).test(source);
      return isDefaultOnly ? { path: args.path, namespace: 'builtin-default' } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'builtin-default' }, (args) => ({
      contents: `const builtin = require(${JSON.stringify(args.path)});\nexport default builtin;\n`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20.19',
  format: 'cjs',
  logLevel: 'warning',
  absWorkingDir: root,
};

const cli = await esbuild.build({
  ...common,
  entryPoints: [join(root, 'src/cli.ts')],
  outfile: join(dist, 'mmauth.cjs'),
  sourcemap: withSourceMaps ? 'linked' : false,
  // Whitespace and syntax only: names stay, so stack traces (--verbose) still read.
  minifyWhitespace: true,
  minifySyntax: true,
  // The launcher takes the version from the bundle, not from package.json.
  define: { MMAUTH_VERSION: JSON.stringify(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version) },
  plugins: [lazyRequires, lazyChildProcessInCommander, leanWritePath, builtinDefaults],
  metafile: true,
});
await Promise.all([
  ...Object.values(PACKAGES)
    .filter((spec) => spec.vendor !== undefined)
    .map((spec) => {
      const outfile = join(dist, 'vendor', `${spec.vendor}.cjs`);
      // open finds its xdg-open script beside its own file, through import.meta.url.
      const importMeta = {
        define: { 'import.meta.url': 'importMetaUrl' },
        banner: { js: 'const importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
      };
      return esbuild.build({
        ...common,
        ...(spec.vendor === 'open' ? importMeta : {}),
        entryPoints: [spec.vendor],
        outfile,
      });
    }),
  // exec's watchdog, a process of its own (src/exec/watchdog.ts starts dist/watchdog.cjs).
  esbuild.build({
    ...common,
    entryPoints: [join(root, 'src/exec/watchdog-main.ts')],
    outfile: join(dist, 'watchdog.cjs'),
  }),
  esbuild.build({
    ...common,
    entryPoints: [join(root, 'src/emulator/emulator.ts')],
    outfile: join(dist, 'emulator.cjs'),
    sourcemap: withSourceMaps ? 'linked' : false,
  }),
]);
copyFileSync(join(root, 'node_modules/open/xdg-open'), join(dist, 'vendor/xdg-open'));

// bin/mmauth.cjs compiles the bundle without an import() handler: there must be no import().
const bundle = readFileSync(join(dist, 'mmauth.cjs'), 'utf8');
// bin/mmauth.cjs reads the bundle as Latin-1: it must be ASCII (esbuild's default `charset`).
if (/[^\x00-\x7f]/.test(bundle)) throw new Error('dist/mmauth.cjs is not ASCII: bin/mmauth.cjs reads it as Latin-1');
if (/\bimport\(/.test(bundle)) {
  throw new Error('dist/mmauth.cjs contains an import(): load that module through PACKAGES in scripts/build.mjs');
}
if (isVerbose) {
  console.log(await esbuild.analyzeMetafile(cli.metafile));
}

// Warm the code caches: the shared one and one per command users wait on (scripts/warm-code-cache.mjs).
execFileSync(process.execPath, [join(root, 'scripts', 'warm-code-cache.mjs')], { stdio: 'inherit' });
if (isVerbose) {
  console.log(
    `code cache: ${readFileSync(join(dist, 'cache', process.version, 'mmauth.cjs.cache')).byteLength} bytes for ${pathToFileURL(join(dist, 'mmauth.cjs')).href}`,
  );
}
