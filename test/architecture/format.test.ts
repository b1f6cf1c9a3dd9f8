/**
 * The formatting check of `npm test`: every source, test, script and bench file is as prettier
 * (.prettierrc.json) would write it. Run here, beside the other suites, rather than before them.
 * `npm run format` fixes what it reports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DIRECTORIES = ['src', 'test', 'scripts', 'bench', 'bin'];
const EXTENSIONS = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : EXTENSIONS.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The files prettier would rewrite. */
async function unformatted(files: string[]): Promise<string[]> {
  const options = (await prettier.resolveConfig(join(ROOT, 'package.json'))) ?? {};
  const verdicts = await Promise.all(
    files.map(async (file) => ({
      file,
      isFormatted: await prettier.check(readFileSync(file, 'utf8'), { ...options, filepath: file }),
    })),
  );
  return verdicts.filter((verdict) => !verdict.isFormatted).map((verdict) => relative(ROOT, verdict.file));
}

describe('formatting (prettier)', () => {
  it('every file is formatted (npm run format fixes it)', async () => {
    const files = [...DIRECTORIES.flatMap((dir) => filesUnder(join(ROOT, dir))), join(ROOT, 'vitest.config.ts')];
    expect(files.length).toBeGreaterThan(100);
    expect(await unformatted(files)).toEqual([]);
    // Prettier over some 500 files is CPU work, no wait: 10 s on a quiet machine, over 30 s beside
    // four busy workers on two cores. The bound only catches a hang.
  }, 180_000);

  it('the check fails on an unformatted file', async () => {
    const options = (await prettier.resolveConfig(join(ROOT, 'package.json'))) ?? {};
    expect(await prettier.check('const  x = {a:1}\n', { ...options, filepath: 'x.ts' })).toBe(false);
  });
});
