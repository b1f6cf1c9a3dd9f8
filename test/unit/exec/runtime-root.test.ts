/**
 * This user's runtime root (exec/token-file.ts): the one directory every run's private directory is
 * made in, found again by every run, and never another user's (a name taken first is passed over).
 */
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPrivateDir, runtimeRootIn, runtimeRootsIn } from '../../../src/exec/token-file.js';
import { makeScratchDir } from '../../support/cli.js';

const uid = process.getuid?.() ?? 0;

describe('runtimeRootIn', () => {
  it('makes mmauth-<uid> (0700) when missing and finds the same one again; every private directory goes in it', () => {
    const parent = makeScratchDir('runtime-parent-', 0o1777);
    const root = runtimeRootIn(parent);
    expect(root).toBe(join(parent, `mmauth-${uid}`));
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(runtimeRootIn(parent)).toBe(root);
    expect(runtimeRootsIn([parent])).toEqual([root]);
    const runtime = makeScratchDir('xdg-runtime-', 0o700);
    const dir = createPrivateDir({ XDG_RUNTIME_DIR: runtime }, 'mmauth-exec-');
    try {
      expect(dir.path.startsWith(`${runtime}/mmauth-${uid}/mmauth-exec-`)).toBe(true);
      expect(statSync(dir.path).mode & 0o777).toBe(0o700);
    } finally {
      dir.remove();
    }
  });

  it.runIf(uid === 0)(
    'a mmauth-<uid> another user made first is passed over for a mkdtemp one of ours, found again; the other is never listed',
    () => {
      const parent = makeScratchDir('runtime-parent-', 0o1777);
      const taken = join(parent, `mmauth-${uid}`);
      mkdirSync(taken, { mode: 0o700 });
      chownSync(taken, 65534, 65534);
      const root = runtimeRootIn(parent);
      expect(root).not.toBe(taken);
      expect(basename(root).startsWith(`mmauth-${uid}-`)).toBe(true);
      expect(statSync(root).uid).toBe(uid);
      expect(runtimeRootIn(parent)).toBe(root);
      expect(runtimeRootsIn([parent])).toEqual([root]);
    },
  );

  it('a mmauth-<uid> of ours that others may read is not a root (nothing is put in it)', () => {
    const parent = makeScratchDir('runtime-parent-', 0o1777);
    const open = join(parent, `mmauth-${uid}`);
    mkdirSync(open);
    chmodSync(open, 0o755);
    const root = runtimeRootIn(parent);
    expect(root).not.toBe(open);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(runtimeRootsIn([parent])).toEqual([root]);
  });
});
