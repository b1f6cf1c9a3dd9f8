#!/usr/bin/env node
// `npm pack` and `npm publish` (prepack, postpack): the packed package.json carries no `prepare`
// script. A clone builds on `npm ci` through `prepare`; an installed tarball has dist/ already, and a
// lifecycle script in it would only make npm warn that the package runs install scripts. `--strip`
// keeps the original beside it and writes package.json without `prepare`; `--restore` puts it back.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, 'package.json.unpacked');

if (process.argv[2] === '--strip') {
  const text = readFileSync(manifest, 'utf8');
  if (!existsSync(kept)) writeFileSync(kept, text);
  const json = JSON.parse(text);
  delete json.scripts.prepare;
  writeFileSync(manifest, `${JSON.stringify(json, null, 2)}\n`);
} else if (process.argv[2] === '--restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  console.error('usage: node scripts/pack-manifest.mjs --strip | --restore');
  process.exit(2);
}
