#!/usr/bin/env node
// `npm test`'s static checks, side by side (two cores): the type check of src and test, and the
// formatting check (prettier). Exits non-zero when either fails; each prints its own findings.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (label, args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
    child.on('close', (code) => resolve({ label, code }));
  });
const results = await Promise.all([
  run('typecheck', [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.test.json']),
  run('format', [
    join(root, 'node_modules/prettier/bin/prettier.cjs'),
    '--check',
    '--log-level',
    'warn',
    'src',
    'test',
    'scripts',
    'bench',
    'bin',
    'vitest.config.ts',
  ]),
]);
const failed = results.filter((result) => result.code !== 0);
for (const { label } of failed) console.error(`${label} failed`);
process.exit(failed.length === 0 ? 0 : 1);
