#!/usr/bin/env node
// `npm test` after the build: the type check of src and test (tsc) runs beside vitest, whose
// suites spend much of their time waiting on spawned processes and servers. Exits non-zero when
// either fails; extra arguments go to vitest.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (label, args) =>
  new Promise((resolve) => {
    // No test touches the developer's keyring (see vitest.config.ts).
    const env = { ...process.env };
    delete env.DBUS_SESSION_BUS_ADDRESS;
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env });
    child.on('close', (code, signal) => resolve({ label, isOk: code === 0 && signal === null }));
  });
// The Debian packages some suites drive (puma, bwrap, sshd, …), installed when missing.
const packages = await new Promise((resolve) => {
  const child = spawn('bash', [join(root, 'scripts/system-packages.sh')], { cwd: root, stdio: 'inherit' });
  child.on('close', (code) => resolve(code === 0));
});
if (!packages) {
  console.error('npm test: the Debian packages the suites need are missing (scripts/system-packages.sh)');
  process.exit(1);
}
const results = await Promise.all([
  run('type check (tsc -p tsconfig.test.json)', [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    'tsconfig.test.json',
  ]),
  run('vitest', [join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...process.argv.slice(2)]),
]);
const failed = results.filter((result) => !result.isOk);
for (const { label } of failed) console.error(`npm test: ${label} failed`);
process.exit(failed.length === 0 ? 0 : 1);
