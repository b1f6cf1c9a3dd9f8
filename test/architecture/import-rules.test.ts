/**
 * The layering of ARCHITECTURE.md, checked over the import graph of src/: which layer may import
 * which, which npm packages each layer may load, and that the layers below the commands neither
 * choose exit codes nor name a flag or an environment variable in an error.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  importCircles,
  importEdgesOf,
  importGraph,
  importsOf,
  layerOf,
  reachableFrom,
  resolveImport,
  sourceFiles,
  SRC,
} from './import-graph.js';

/**
 * Layer → the layers it may import (itself always). Top-level files are their own layer. The command
 * line is cli, program, commands and failure; everything else is the core the library runs on.
 */
const ALLOWED_LAYERS: Record<string, readonly string[]> = {
  // grant: the renewals in flight it waits for before exiting; util: the signals a command claims.
  cli: ['commands', 'context', 'errors', 'exit-codes', 'failure', 'grant', 'program', 'settings', 'ui', 'util'],
  program: ['commands', 'context'],
  commands: [
    'agent',
    'browser',
    'context',
    'diagnosis',
    'emulator',
    'errors',
    'exec',
    'exit-codes',
    'failure',
    'grant',
    'http',
    'loopback',
    'oauth',
    'settings',
    'signin',
    'store',
    'token',
    'ui',
    'util',
  ],
  failure: ['context', 'errors', 'exit-codes', 'oauth/wire', 'settings', 'util'],
  // The library's entry and layer (issue 32): the core only, never the command line.
  index: ['errors', 'library'],
  library: [
    'browser',
    'context',
    'errors',
    'exit-codes',
    'grant',
    'http',
    'settings',
    'signin',
    'store',
    'token',
    'util',
  ],
  // The sign-in (login and logout below the command line): one flow, its ports for what only a terminal or a program provides.
  signin: ['context', 'errors', 'grant', 'http', 'loopback', 'oauth', 'settings', 'store', 'ui', 'util'],
  // What `doctor` checks (the machine, the server, the grant), each check a result; the command prints them.
  // agent: a runner fed by the agent is checked through the agent's client (doctor-agent.ts).
  diagnosis: [
    'agent',
    'browser',
    'context',
    'errors',
    'exec',
    'grant',
    'http',
    'oauth',
    'settings',
    'store',
    'ui',
    'util',
  ],
  token: [
    'agent',
    'context',
    'errors',
    'exec',
    'grant',
    'http',
    'loopback',
    'oauth',
    'settings',
    'store',
    'ui',
    'util',
  ],
  // What `exec` runs a child with: its private token files, the watchdog, bubblewrap's sandbox.
  exec: ['errors', 'util'],
  // The token agent's protocol, client and server (mmauth agent): what crosses its socket, nothing of the store.
  agent: ['errors', 'loopback/peer-check', 'util'],
  settings: ['context', 'errors', 'grant', 'oauth', 'store', 'util'],
  'exit-codes': [],
  context: ['browser', 'errors', 'http', 'oauth', 'store', 'ui', 'util'],
  grant: ['context', 'errors', 'http', 'oauth', 'store', 'util'],
  ui: ['errors', 'loopback', 'store', 'util'],
  browser: ['errors', 'util'],
  demo: ['emulator', 'ui'],
  oauth: ['errors', 'http', 'util'],
  http: ['errors', 'util'],
  loopback: ['errors', 'http/authenticated-request', 'util'],
  store: ['errors', 'oauth/wire', 'util'],
  emulator: ['errors', 'oauth/wire', 'util'],
  util: ['errors'],
  // The exit code of every error (MmauthError.exitCode); exit-codes.ts imports nothing.
  errors: ['exit-codes'],
};

/** The command line: the layers a Node program importing `mmauth` never loads. */
const COMMAND_LINE_LAYERS = ['cli', 'program', 'commands', 'failure'];

/** The packages only the command line may load (decisions 44): a program importing `mmauth` loads none of them. */
const COMMAND_LINE_PACKAGES = ['@commander-js/extra-typings', 'commander', 'chalk', 'open', 'qrcode', /^@inquirer\//];

/** Layer → npm packages it may import; node: built-ins are free. */
const ALLOWED_PACKAGES: Record<string, readonly string[]> = {
  cli: ['@commander-js/extra-typings'],
  program: ['@commander-js/extra-typings'],
  commands: ['@commander-js/extra-typings'],
  // qrcode: login --device --qr's drawing (ui/device-code-view.ts), loaded only then.
  ui: ['chalk', '@inquirer/password', '@inquirer/input', '@inquirer/checkbox', 'qrcode'],
  browser: ['open'],
  oauth: ['oauth4webapi'],
  http: ['undici'],
  store: ['conf', 'env-paths', 'proper-lockfile', '@napi-rs/keyring'],
  // exec --sandbox's engine, behind one adapter (exec/sandbox-engine.ts).
  exec: ['@anthropic-ai/sandbox-runtime'],
};

/** Layers below the commands: they raise coded errors and leave exit codes and hints to the failure map. */
const LOWER_LAYERS = ['agent', 'grant', 'oauth', 'http', 'loopback', 'store'];

/** The npm package a bare specifier names: `@scope/name` or `name`, without a path into it. */
function packageOf(specifier: string): string {
  return specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
}

/** Whether `name` is a package only the command line may load. */
function isCommandLinePackage(name: string): boolean {
  return COMMAND_LINE_PACKAGES.some((pattern) => (typeof pattern === 'string' ? pattern === name : pattern.test(name)));
}

/** Whether `target` (a path under src/ without extension) is allowed for `layer`. */
function isAllowedTarget(layer: string, target: string): boolean {
  const targetLayer = target.includes('/') ? (target.split('/')[0] ?? '') : target;
  if (targetLayer === layer) return true;
  return (ALLOWED_LAYERS[layer] ?? []).some((allowed) => allowed === targetLayer || target === allowed);
}

/** `text` without its comments (block and line), so that only code and strings are judged. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** What a lower-layer file does that only the command layer may: exit codes, hints, flag or variable names. */
function lowerLayerViolations(source: string): string[] {
  const found: string[] = [];
  const text = withoutComments(source);
  // The environment's MMAUTH_* variables are read above (settings, context), never here.
  for (const read of text.matchAll(/\bMMAUTH_[A-Z_]+/g)) found.push(`reads or names ${read[0]}`);
  // No flag named in any string (a message, a refusal): the command layer words those.
  for (const literal of text.matchAll(/(['"`])((?:\\.|(?!\1)[^\\])*?)\1/g)) {
    const flag = /(?:^|[\s(])--[a-z][a-z-]+/.exec(literal[2] ?? '');
    if (
      flag !== null &&
      !/setFlagsFromString/.test(text.slice(Math.max(0, (literal.index ?? 0) - 40), literal.index))
    ) {
      found.push(`a string names a flag: ${flag[0].trim()}`);
    }
  }
  if (/ExitCode|exitCode|\bhint\s*:/.test(text)) found.push('chooses an exit code or a hint');
  for (const call of text.matchAll(/new MmauthError\(([\s\S]*?)\);/g)) {
    const args = call[1] ?? '';
    if (/--[a-z]/.test(args) || /\b(?:MMAUTH_[A-Z_]+|NODE_EXTRA_CA_CERTS|HTTPS?_PROXY|NO_PROXY)\b/.test(args)) {
      found.push(`an error names a flag or variable: ${args.trim().slice(0, 80)}`);
    }
  }
  return found;
}

/**
 * The command-line packages a program importing `entry` could ever load, through any import that
 * runs (static or `import()`, type-only ones excepted): `open` is allowed behind an `import()` only.
 */
function libraryPackageViolations(entry: string, sources: readonly string[]): string[] {
  const reachable = reachableFrom(
    entry,
    importGraph(sources, (edge) => !edge.isTypeOnly),
  );
  return [...reachable].flatMap((file) =>
    importEdgesOf(readFileSync(file, 'utf8'))
      .filter((edge) => !edge.isTypeOnly && resolveImport(file, edge.specifier) === undefined)
      .filter((edge) => isCommandLinePackage(edge.specifier) && !(edge.specifier === 'open' && !edge.isStatic))
      .map((edge) => `${relative(SRC, file)} → ${edge.specifier}`),
  );
}

/** A planted library: an entry reaching a file that loads chalk and inquirer lazily, and `open` statically. */
function plantedLibraryViolations(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-planted-'));
  try {
    writeFileSync(
      join(dir, 'entry.ts'),
      "import open from 'open';\nimport { ui } from './ui.js';\nexport { open, ui };\n",
    );
    writeFileSync(
      join(dir, 'ui.ts'),
      "export const ui = () => Promise.all([import('chalk'), import('@inquirer/input'), import('open')]);\n",
    );
    const planted = [join(dir, 'entry.ts'), join(dir, 'ui.ts')];
    return libraryPackageViolations(planted[0] ?? '', planted).map((line) => line.replace(/^[^ ]*\//, ''));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const files = sourceFiles(SRC);

describe('import rules (ARCHITECTURE.md)', () => {
  it('knows the layer of every source file', () => {
    expect(files.map(layerOf).filter((layer) => !(layer in ALLOWED_LAYERS))).toEqual([]);
  });

  it('every import between layers is one the layering allows', () => {
    const violations: string[] = [];
    for (const file of files) {
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const target = relative(SRC, resolve(dirname(file), specifier))
          .replace(/\\/g, '/')
          .replace(/\.js$/, '');
        if (!isAllowedTarget(layerOf(file), target)) violations.push(`${relative(SRC, file)} → ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('npm packages load only in the layer that owns them (chalk and inquirer in ui, conf in store, …)', () => {
    const violations: string[] = [];
    for (const file of files) {
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        if (!(ALLOWED_PACKAGES[layerOf(file)] ?? []).includes(packageOf(specifier))) {
          violations.push(`${relative(SRC, file)} → ${specifier}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('below the commands, errors carry a code only: no exit code, no hint, no flag or variable name', () => {
    const violations = files
      .filter((file) => LOWER_LAYERS.includes(layerOf(file)))
      .flatMap((file) => lowerLayerViolations(readFileSync(file, 'utf8')).map((v) => `${relative(SRC, file)}: ${v}`));
    expect(violations).toEqual([]);
  });

  it('no import circle between files, counting type imports (issue 32: the four-file circle around LoginOptions)', () => {
    expect(importCircles(importGraph(files, () => true))).toEqual([]);
  });

  it('the library entry reaches no command-line file, and loads no command-line package at import', () => {
    const entry = join(SRC, 'index.ts');
    const everything = reachableFrom(
      entry,
      importGraph(files, () => true),
    );
    expect(
      [...everything].filter((file) => COMMAND_LINE_LAYERS.includes(layerOf(file))).map((f) => relative(SRC, f)),
    ).toEqual([]);
    const loadedAtImport = reachableFrom(
      entry,
      importGraph(files, (edge) => edge.isStatic && !edge.isTypeOnly),
    );
    const packages = [...loadedAtImport].flatMap((file) =>
      importEdgesOf(readFileSync(file, 'utf8'))
        .filter((edge) => edge.isStatic && !edge.isTypeOnly && resolveImport(file, edge.specifier) === undefined)
        .map((edge) => `${relative(SRC, file)} → ${edge.specifier}`),
    );
    expect(packages.filter((line) => isCommandLinePackage(line.split(' → ')[1] ?? ''))).toEqual([]);
  });

  it("the library entry reaches no command-line package even behind import() (open alone, loaded lazily by login()'s default opener)", () => {
    expect(libraryPackageViolations(join(SRC, 'index.ts'), files)).toEqual([]);
  });

  it('each check fails on a planted violation', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(
      importCircles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
    expect(isCommandLinePackage('@inquirer/password')).toBe(true);
    expect(isCommandLinePackage('undici')).toBe(false);
    expect(isAllowedTarget('library', 'commands/options')).toBe(false);
    expect(isAllowedTarget('token', 'failure/failure-report')).toBe(false);
    expect(lowerLayerViolations('const secret = env.MMAUTH_CLIENT_SECRET;')).toEqual([
      'reads or names MMAUTH_CLIENT_SECRET',
    ]);
    expect(lowerLayerViolations("refuse(res, 403, 'x', `${m} is not allowed (--allow-methods)`);")).toEqual([
      'a string names a flag: (--allow-methods',
    ]);
    expect(lowerLayerViolations('// a comment may name --allow-methods and MMAUTH_TOKEN\nconst a = 1;')).toEqual([]);
    expect(plantedLibraryViolations().sort()).toEqual(['entry.ts → open', 'ui.ts → @inquirer/input', 'ui.ts → chalk']);
    expect(isAllowedTarget('ui', 'grant/end-grant')).toBe(false);
    expect(isAllowedTarget('browser', 'ui/prompts')).toBe(false);
    expect(importEdgesOf("import type { A } from './a.js';\nconst m = await import('./b.js');")).toEqual([
      { specifier: './a.js', isStatic: true, isTypeOnly: true },
      { specifier: './b.js', isStatic: false, isTypeOnly: false },
    ]);
    expect(isAllowedTarget('oauth', 'failure/failure-report')).toBe(false);
    expect(isAllowedTarget('store', 'oauth/parse')).toBe(false);
    expect(isAllowedTarget('store', 'oauth/wire')).toBe(true);
    expect(importsOf("import x from './a.js';\nconst y = await import('../b.js');")).toEqual(['./a.js', '../b.js']);
    expect(lowerLayerViolations("throw new MmauthError('x', 'pass --base-url');")).not.toEqual([]);
    expect(lowerLayerViolations("throw new MmauthError('x', 'set MMAUTH_TOKEN');")).not.toEqual([]);
    expect(lowerLayerViolations("new MmauthError('x', 'y', { hint: 'z' });")).toHaveLength(1);
    expect(lowerLayerViolations("throw new MmauthError('connection_failed', 'refused');")).toEqual([]);
  });
});
