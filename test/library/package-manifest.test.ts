/**
 * The packed manifest (scripts/pack-manifest.mjs, run by prepack and postpack): the tarball's
 * package.json has no `prepare` script, so installing it runs no lifecycle script and npm has no
 * install script to warn about; the clone's package.json is back as it was after packing. Run on a
 * copy of the manifest (packing the checkout itself would rebuild dist/ under the running suite).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeScratchDir } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the packed package.json', () => {
  it('has no prepare script and keeps every other field; postpack puts the original back byte for byte', () => {
    const copy = makeScratchDir('mmauth-manifest-');
    mkdirSync(join(copy, 'scripts'));
    copyFileSync(join(ROOT, 'scripts', 'pack-manifest.mjs'), join(copy, 'scripts', 'pack-manifest.mjs'));
    copyFileSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
    const original = readFileSync(join(copy, 'package.json'), 'utf8');
    const manifest = JSON.parse(original) as { scripts: Record<string, string> } & Record<string, unknown>;
    // The clone's own manifest builds on `npm ci` and strips and restores around `npm pack`.
    expect(manifest.scripts.prepare).toBe('npm run build');
    expect(manifest.scripts.prepack).toContain('pack-manifest.mjs --strip');
    expect(manifest.scripts.postpack).toContain('pack-manifest.mjs --restore');

    execFileSync(process.execPath, [join(copy, 'scripts', 'pack-manifest.mjs'), '--strip']);
    const packed = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as typeof manifest;
    expect(packed.scripts.prepare).toBeUndefined();
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(packed.scripts[hook]).toBeUndefined();
    const { prepare: _prepare, ...otherScripts } = manifest.scripts;
    expect(packed).toEqual({ ...manifest, scripts: otherScripts });

    execFileSync(process.execPath, [join(copy, 'scripts', 'pack-manifest.mjs'), '--restore']);
    expect(readFileSync(join(copy, 'package.json'), 'utf8')).toBe(original);
    expect(existsSync(join(copy, 'package.json.unpacked'))).toBe(false);
  });
});
