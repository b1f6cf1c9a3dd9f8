/**
 * The sandbox's scan before the child, as the worker walks (scan-worker.ts), against ripgrep's
 * listing of the same globs (scanRunsLater): the same runs-later paths, walls and on-purpose files
 * in a tree of every kind the scan knows; the worker also lists links (ripgrep lists none) and
 * every directory's identity.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeScratchDir } from '../../support/cli.js';
import { scanOf, scanRunsLater } from '../../../src/exec/runs-later.js';
import { dirIdentity } from '../../../src/exec/runs-later-changes.js';
import { walk } from '../../../src/exec/scan-worker.js';

const FILES = [
  '.husky/_/pre-commit',
  '.vscode/settings.json',
  '.idea/workspace.xml',
  '.ssh/config',
  '.local/bin/git',
  '.config/fish/config.fish',
  '.config/systemd/user/evil.service',
  'node_modules/.bin/tool',
  'node_modules/foo/package.json',
  'node_modules/mmauth/dist/a.js',
  'node_modules/mmauth/package.json',
  'Makefile',
  'package.json',
  '.envrc',
  '.npmrc',
  '.github/workflows/ci.yml',
  'd1/.bash_login',
  'd1/.mcp.json',
  'd1/d2/lefthook.yml',
  'd1/d2/.pre-commit-config.yaml',
  'src/main.ts',
  'src/config',
];

describe('the scan before the child, walked in a worker', () => {
  it('names what ripgrep names in a tree of every kind, plus links, and every directory with its identity', () => {
    const root = makeScratchDir('scan-walk-');
    execFileSync('git', ['init', '-q', root]);
    execFileSync('git', ['init', '-q', join(root, 'd1', 'd2')]);
    execFileSync('git', ['init', '-q', '--bare', join(root, 'remote.git')]);
    for (const file of [...FILES, '.git/modules/sub/config', '.git/modules/sub/hooks/post-checkout']) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), 'x');
    }
    mkdirSync(join(root, 'inner'));
    writeFileSync(join(root, 'inner', '.git'), 'gitdir: ../elsewhere');
    symlinkSync('/nowhere', join(root, '.bashrc-link'));
    symlinkSync('/nowhere', join(root, 'd1', '.zshenv'));
    const byRipgrep = scanRunsLater([root]);
    const walked = walk([root]);
    const byWorker = scanOf([root], walked.files, new Map(walked.dirs));
    const keys = (map: Map<string, string>) => [...map.keys()].sort();
    // The one difference: the worker lists links (here d1/.zshenv, a start-up name).
    expect(keys(byWorker.present)).toEqual([...keys(byRipgrep.present), join(root, 'd1', '.zshenv')].sort());
    expect(keys(byWorker.onPurpose)).toEqual(keys(byRipgrep.onPurpose));
    expect(keys(byWorker.onPurpose)).toHaveLength(6);
    expect(byWorker.present.has(join(root, 'remote.git', 'hooks'))).toBe(true);
    expect(byWorker.present.has(join(root, '.git', 'modules', 'sub', 'hooks'))).toBe(true);
    for (const [dir, identity] of walked.dirs) expect(dirIdentity(dir), dir).toBe(identity);
    expect(walked.dirs.length).toBeGreaterThan(30);
  });
});
