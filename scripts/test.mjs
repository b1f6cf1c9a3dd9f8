#!/usr/bin/env node
// `npm test` after the build: the type check of src and test (tsc) runs beside vitest, whose
// suites spend much of their time waiting on spawned processes and servers. Exits non-zero when
// either fails; extra arguments go to vitest.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
// vitest also writes its counts to a JSON report, for the closing line.
const report = join(mkdtempSync(join(tmpdir(), 'mmauth-test-report-')), 'vitest.json');
const results = await Promise.all([
  run('type check (tsc -p tsconfig.test.json)', [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    'tsconfig.test.json',
  ]),
  run('vitest', [
    join(root, 'node_modules/vitest/vitest.mjs'),
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ]),
]);
const failed = results.filter((result) => !result.isOk);
for (const { label } of failed) console.error(`npm test: ${label} failed`);
let counts;
try {
  counts = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  counts = undefined;
}
rmSync(dirname(report), { recursive: true, force: true });
// One line of what ran and how it went (`npm test` builds before this script runs), then the plain count.
const [typeCheck, vitest] = results;
const tests =
  counts === undefined
    ? 'no test report'
    : `${counts.numPassedTests} tests passed in ${counts.testResults.length} files (${counts.numFailedTests} failed, ${counts.numPendingTests + counts.numTodoTests} skipped)`;
console.log(
  `npm test: build passed, type check ${typeCheck.isOk ? 'passed' : 'FAILED'}, vitest ${vitest.isOk ? 'passed' : 'FAILED'}: ${tests}`,
);
if (counts !== undefined) console.log(`tests: ${counts.numPassedTests} passed, ${counts.numFailedTests} failed`);
process.exit(failed.length === 0 ? 0 : 1);
