/**
 * The suite signals one process at a time, through test/support/signal.ts's signalPid: a bare
 * process.kill with a pid read from a file or a child that never started can be 0, which kill(2)
 * takes as the caller's whole process group (the test runner, npm and CI's script die by SIGKILL
 * with nothing reported). This check keeps the bare call out of the tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : /\.(?:ts|mts|cts|js|mjs|cjs)$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('signals in the suite', () => {
  it('no test calls process.kill itself: signalPid refuses a pid that is not one process', () => {
    const files = testFiles(join(ROOT, 'test'));
    expect(files.length).toBeGreaterThan(100);
    const bare = files
      .filter((file) => relative(ROOT, file) !== join('test', 'support', 'signal.ts'))
      .filter((file) => relative(ROOT, file) !== join('test', 'architecture', 'signals.test.ts'))
      // A script a test writes for a child to run may signal itself (its own pid), never another.
      .filter((file) => /process\.kill\((?!process\.pid\b)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(bare).toEqual([]);
  });
});
