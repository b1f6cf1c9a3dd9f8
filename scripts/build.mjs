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
//    - our own split point: the emulator, dist/emulator.cjs, loaded only by `mmauth emulator`.
// 3. The code cache: bin/mmauth.cjs runs a few read-only commands with MMAUTH_BUILD_CODE_CACHE=1
//    and keeps what V8 compiled for them in dist/mmauth.cjs.cache.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  'proper-lockfile': { from: 'proper-lockfile' },
  '@napi-rs/keyring': { from: '@napi-rs/keyring' },
  '@inquirer/password': { from: '@inquirer/password', isDefaultOnly: true },
  '@inquirer/input': { from: '@inquirer/input', isDefaultOnly: true },
  '@inquirer/checkbox': { from: '@inquirer/checkbox', isDefaultOnly: true },
  oauth4webapi: { from: './vendor/oauth4webapi.cjs', vendor: 'oauth4webapi' },
  chalk: { from: './vendor/chalk.cjs', vendor: 'chalk' },
  conf: { from: './vendor/conf.cjs', vendor: 'conf', isDefaultOnly: true },
  open: { from: './vendor/open.cjs', vendor: 'open', isDefaultOnly: true },
  '../emulator/emulator.js': { from: './emulator.cjs' },
};

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], {
  stdio: 'inherit',
});

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
  plugins: [lazyRequires, lazyChildProcessInCommander],
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
if (/\bimport\(/.test(bundle)) {
  throw new Error('dist/mmauth.cjs contains an import(): load that module through PACKAGES in scripts/build.mjs');
}
if (isVerbose) {
  console.log(await esbuild.analyzeMetafile(cli.metafile));
}

// Warm the code cache on the start-up paths: help, then the read-only token commands.
const home = mkdtempSync(join(tmpdir(), 'mmauth-build-'));
try {
  const env = {
    ...process.env,
    // Never the developer's keyring: with no session bus, credentials go to this temporary file.
    DBUS_SESSION_BUS_ADDRESS: '',
    MMAUTH_BUILD_CODE_CACHE: '1',
    MMAUTH_CONFIG_DIR: home,
    MMAUTH_BASE_URL: 'http://127.0.0.1:9',
  };
  const run = (args, input) =>
    execFileSync(process.execPath, [join(root, 'bin/mmauth.cjs'), ...args], {
      env,
      input,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  const runAllowingFailure = (args) => {
    try {
      run(args);
    } catch {
      // exit 4 (no token yet) is a path worth caching too
    }
  };
  runAllowingFailure(['token']);
  // A sealed profile whose keyring is out of reach (no session bus here): the keyring path up to
  // the addon's connection, which `token` on a keyring profile takes every time (the copy of its
  // access token first).
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      profiles: {
        sealed: {
          base_url: 'http://127.0.0.1:9',
          credential_store: 'keyring',
          token: {
            token_type: 'bearer',
            grant: 'personal',
            obtained_at: new Date(0).toISOString(),
            // Names of the shapes mmauth makes (a copy's account, a 128-bit key id), or the vault skips the keyring.
            access_token_ref: `access-token.${'0'.repeat(32)}`,
          },
          sealed: {
            v: 2,
            key_id: '0'.repeat(32),
            nonce: 'AAAAAAAAAAAAAAAA',
            ciphertext: 'AAAAAAAAAAAAAAAAAAAAAA',
            fields: ['access_token'],
          },
        },
      },
    }),
    { mode: 0o600 },
  );
  runAllowingFailure(['token', '--profile', 'sealed']);
  rmSync(join(home, 'config.json'));
  run(['login', '--with-token', '--no-verify'], 'build-time-token\n');
  for (const args of [['status'], ['header'], ['token'], ['--help']]) run(args);
} finally {
  rmSync(home, { recursive: true, force: true });
}
if (isVerbose) {
  console.log(
    `code cache: ${readFileSync(join(dist, 'mmauth.cjs.cache')).byteLength} bytes for ${pathToFileURL(join(dist, 'mmauth.cjs')).href}`,
  );
}
