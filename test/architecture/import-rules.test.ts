/**
 * The layering of ARCHITECTURE.md, checked over the import graph of src/: which layer may import
 * which, which npm packages each layer may load, and that the layers below the commands neither
 * choose exit codes nor name a flag or an environment variable in an error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Layer → the layers it may import (itself always). Top-level files are their own layer. */
const ALLOWED_LAYERS: Record<string, readonly string[]> = {
  cli: ['commands', 'context', 'errors', 'program'],
  program: ['commands', 'context'],
  // The library's entry and layer (issue 32). It runs on the command line's own token and renewal
  // modules until the core is split from the commands; it may never load a command-line package.
  index: ['errors', 'library'],
  library: ['commands', 'context', 'errors', 'grant', 'store', 'util'],
  context: ['browser', 'errors', 'http', 'oauth', 'store', 'ui', 'util'],
  commands: ['browser', 'context', 'emulator', 'errors', 'grant', 'http', 'loopback', 'oauth', 'store', 'ui', 'util'],
  grant: ['context', 'errors', 'http', 'oauth', 'store', 'util'],
  ui: ['errors', 'loopback', 'store', 'util'],
  browser: ['errors', 'ui', 'util'],
  demo: ['emulator', 'ui'],
  oauth: ['errors', 'http', 'util'],
  http: ['errors', 'util'],
  loopback: ['errors', 'util'],
  store: ['errors', 'oauth/wire', 'util'],
  emulator: ['errors', 'oauth/wire', 'util'],
  util: ['errors'],
  errors: [],
};

/** Layer → npm packages it may import; node: built-ins are free. */
const ALLOWED_PACKAGES: Record<string, readonly string[]> = {
  cli: ['@commander-js/extra-typings'],
  program: ['@commander-js/extra-typings'],
  commands: ['@commander-js/extra-typings'],
  ui: ['chalk', '@inquirer/password', '@inquirer/input', '@inquirer/checkbox'],
  browser: ['open'],
  oauth: ['oauth4webapi'],
  http: ['undici'],
  store: ['conf', 'env-paths', 'proper-lockfile', '@napi-rs/keyring'],
};

/** Layers below the commands: they raise coded errors and leave exit codes and hints to the failure map. */
const LOWER_LAYERS = ['grant', 'oauth', 'http', 'loopback', 'store'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The layer of a file under src/: its first directory, or its own name for a top-level file. */
function layerOf(file: string): string {
  const path = relative(SRC, file).replace(/\\/g, '/');
  return path.includes('/') ? (path.split('/')[0] ?? '') : path.replace(/\.ts$/, '');
}

/** Every module specifier a file imports, statically or with import(). */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'([^']+)'/g)].map((match) => match[1] ?? '');
}

/** Whether `target` (a path under src/ without extension) is allowed for `layer`. */
function isAllowedTarget(layer: string, target: string): boolean {
  const targetLayer = target.includes('/') ? (target.split('/')[0] ?? '') : target;
  if (targetLayer === layer) return true;
  return (ALLOWED_LAYERS[layer] ?? []).some((allowed) => allowed === targetLayer || target === allowed);
}

/** What a lower-layer file does that only the command layer may: exit codes, hints, flag or variable names. */
function lowerLayerViolations(text: string): string[] {
  const found: string[] = [];
  if (/ExitCode|exitCode|\bhint\s*:/.test(text)) found.push('chooses an exit code or a hint');
  for (const call of text.matchAll(/new MmauthError\(([\s\S]*?)\);/g)) {
    const args = call[1] ?? '';
    if (/--[a-z]/.test(args) || /\b(?:MMAUTH_[A-Z_]+|NODE_EXTRA_CA_CERTS|HTTPS?_PROXY|NO_PROXY)\b/.test(args)) {
      found.push(`an error names a flag or variable: ${args.trim().slice(0, 80)}`);
    }
  }
  return found;
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
        if (!(ALLOWED_PACKAGES[layerOf(file)] ?? []).includes(specifier)) {
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

  it('each check fails on a planted violation', () => {
    expect(isAllowedTarget('oauth', 'commands/shared/failure')).toBe(false);
    expect(isAllowedTarget('store', 'oauth/parse')).toBe(false);
    expect(isAllowedTarget('store', 'oauth/wire')).toBe(true);
    expect(importsOf("import x from './a.js';\nconst y = await import('../b.js');")).toEqual(['./a.js', '../b.js']);
    expect(lowerLayerViolations("throw new MmauthError('x', 'pass --base-url');")).toHaveLength(1);
    expect(lowerLayerViolations("throw new MmauthError('x', 'set MMAUTH_TOKEN');")).toHaveLength(1);
    expect(lowerLayerViolations("new MmauthError('x', 'y', { hint: 'z' });")).toHaveLength(1);
    expect(lowerLayerViolations("throw new MmauthError('connection_failed', 'refused');")).toEqual([]);
  });
});
