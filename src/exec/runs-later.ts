import { lstatSync, readFileSync, statSync } from 'node:fs';
import { installedPackages } from './installed-packages.js';
import type { ScanIndex } from './scan-index.js';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * What git, a shell, the desktop or mmauth run later without the user asking for that file, in
 * every writable root of `exec --sandbox` and at any depth, and the files the user
 * runs on purpose that are worth a word after the run: what classify makes of a listing of the
 * roots' files, hidden and ignored ones too (ripgrep's, which the engine needs anyway, or the last
 * run's index brought up to date: runs-later-changes.ts).
 */

/** Names below a repository's git directory that git reads and runs from. */
const GIT_DIR_ENTRIES = ['config', 'config.worktree', 'commondir', 'hooks'];

/** Hook managers' files at a repository's root: they name what git hooks run. */
const HOOK_MANAGER_FILES = ['.husky', '.pre-commit-config.yaml', 'lefthook.yml', '.lefthook.yml', '.githooks'];

/** Start-up files and directories of shells, login sessions, the desktop and ssh, and editors' and agents' project settings. */
const STARTUP_NAMES = [
  '.bash_login',
  '.bash_logout',
  '.zshenv',
  '.zlogin',
  '.xsessionrc',
  '.xprofile',
  '.pam_environment',
  '.mcp.json',
  '.mmauth-profile',
];

/** Directories (relative to a root) whose whole content runs or configures what runs. */
const STARTUP_DIRS = [
  '.config/fish',
  '.config/environment.d',
  '.config/git',
  '.config/autostart',
  '.config/systemd/user',
  '.ssh',
  '.local/bin',
  '.vscode',
  '.idea',
  // mmauth and the engine installed in a project (what `npx mmauth` runs), wherever they are.
  'node_modules/mmauth',
  'node_modules/@anthropic-ai/sandbox-runtime',
];

/** Files the user runs on purpose (make, npm, direnv, CI): reported after the run when the child changed them. */
const ON_PURPOSE_GLOBS = [
  '**/.envrc',
  '**/Makefile',
  '**/makefile',
  '**/GNUmakefile',
  '**/package.json',
  '**/.npmrc',
  '**/node_modules/.bin/*',
  '**/.github/workflows/*',
];

/** ON_PURPOSE_GLOBS as a test of one path (a package's own package.json in node_modules is no project's). */
function isOnPurposeFile(file: string): boolean {
  if (/\/node_modules\/\.bin\/[^/]+$/.test(file) || /\/\.github\/workflows\/[^/]+$/.test(file)) return true;
  const name = basename(file);
  if (name === 'package.json') return !file.includes('/node_modules/');
  return ['.envrc', 'Makefile', 'makefile', 'GNUmakefile', '.npmrc'].includes(name);
}

/** What the scan found: paths to wall (existing), the runs-later set, and the on-purpose files' fingerprints. */
export interface RunsLaterScan {
  /** Existing paths the child may not write (files and whole directories; never a `.git` directory itself). */
  walled: string[];
  /** Every runs-later path present, with its identity (device and inode): a new or replaced one is the child's. */
  present: Map<string, string>;
  /** On-purpose files and a fingerprint of each (package.json: its scripts; else size and ctime). */
  onPurpose: Map<string, string>;
  /**
   * Every directory under the roots with its identity and what the scan listed in each, where the
   * system's find can say (Linux) or the last run's index did (scan-index.ts): reviewRunsLater then
   * reads only the directories that changed. Undefined: it scans the roots again.
   */
  index?: ScanIndex;
  /** When the scan began (epoch ms): a directory changed since is never trusted by a later run's index. */
  readAtMs?: number;
  /** How the scan was made, for --verbose: `the last run's index (…)` or `every file listed (…)`. */
  source?: string;
}

/** `core.hooksPath` in a git config file's text, or undefined (the last one wins, as git reads it). */
function hooksPathOf(configText: string): string | undefined {
  let section = '';
  let found: string | undefined;
  for (const raw of configText.split('\n')) {
    const line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header !== null) section = (header[1] ?? '').toLowerCase();
    const entry = /^hookspath\s*=\s*"?([^"#;]*)"?/i.exec(line);
    if (section === 'core' && entry !== null) found = (entry[1] ?? '').trim();
  }
  return found === '' ? undefined : found;
}

/** `path`'s identity (device and inode, not followed), or undefined when nothing is there. */
export function identityOf(path: string): string | undefined {
  try {
    const stats = lstatSync(path);
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return undefined;
  }
}

/** The runs-later paths of one repository whose git directory is `gitDir` (its worktree is the parent). */
function repositoryPaths(gitDir: string): string[] {
  const worktree = dirname(gitDir);
  const paths = [gitDir, ...GIT_DIR_ENTRIES.map((name) => join(gitDir, name))];
  paths.push(...HOOK_MANAGER_FILES.map((name) => join(worktree, name)));
  try {
    const hooksPath = hooksPathOf(readFileSync(join(gitDir, 'config'), 'utf8'));
    if (hooksPath !== undefined && !hooksPath.startsWith('~')) {
      paths.push(isAbsolute(hooksPath) ? hooksPath : resolve(worktree, hooksPath));
    }
  } catch {
    // No config to read: nothing it names.
  }
  return paths;
}

/** The runs-later path a listed file stands for (a directory for what lies in a walled one), or undefined. */
function runsLaterPathOf(file: string): string | undefined {
  const inModules = /^(.*\/\.git\/modules\/.+?)\/(hooks(?=\/)|config$)/.exec(file);
  if (inModules !== null) return `${inModules[1]}/${inModules[2]}`;
  if (/\/\.git\//.test(file)) return undefined;
  const dir = [...STARTUP_DIRS, '.husky', '.githooks'].find((name) => file.includes(`/${name}/`));
  if (dir !== undefined) return file.slice(0, file.lastIndexOf(`/${dir}/`) + dir.length + 1);
  const name = basename(file);
  if (file.endsWith('/node_modules/.bin/mmauth')) return file;
  return STARTUP_NAMES.includes(name) || HOOK_MANAGER_FILES.includes(name) || name === '.git' ? file : undefined;
}

/** The fingerprint of an on-purpose file: package.json's scripts, else its size and ctime (which no process can set back). */
export function fingerprint(path: string): string {
  try {
    if (basename(path) === 'package.json') {
      const scripts = (JSON.parse(readFileSync(path, 'utf8')) as { scripts?: unknown }).scripts;
      return JSON.stringify(scripts ?? null);
    }
    const stats = statSync(path, { bigint: true });
    return `${stats.size}:${stats.ctimeNs}`;
  } catch {
    return 'unreadable';
  }
}

/** Whether `path` is `root` or lies below it (both absolute, real). */
export const isUnder = (path: string, root: string) => path === root || path.startsWith(`${root}${sep}`);

/** What ripgrep lists for scanRunsLater (later globs win: a package's own package.json in node_modules is left out). */
export const SCAN_GLOBS: readonly string[] = [
  // A bare repository (a push target) is known by its HEAD beside config and objects/.
  '**/HEAD',
  '**/.git',
  '**/.git/config',
  '**/.git/modules/**/config',
  '**/.git/modules/**/hooks/*',
  ...STARTUP_NAMES.map((name) => `**/${name}`),
  ...[...STARTUP_DIRS, '.husky', '.githooks'].map((dir) => `**/${dir}/**`),
  ...HOOK_MANAGER_FILES.map((name) => `**/${name}`),
  ...ON_PURPOSE_GLOBS,
  '!**/node_modules/**/package.json',
  '**/node_modules/mmauth/**',
  '**/node_modules/@anthropic-ai/sandbox-runtime/**',
];

/** The runs-later paths and on-purpose files that `files` (paths under the roots) stand for. */
export function classify(files: Iterable<string>): {
  paths: Set<string>;
  onPurpose: Set<string>;
  gitDirs: Set<string>;
} {
  const paths = new Set<string>();
  const onPurpose = new Set<string>();
  const gitDirs = new Set<string>();
  for (const file of files) {
    if (
      file.endsWith('/.git/config') ||
      (basename(file) === 'HEAD' && !file.includes('/.git/') && isBare(dirname(file)))
    ) {
      const gitDir = dirname(file);
      gitDirs.add(gitDir);
      for (const path of repositoryPaths(gitDir)) paths.add(path);
      continue;
    }
    if (basename(file) === 'HEAD') continue;
    const path = runsLaterPathOf(file);
    if (path !== undefined) paths.add(path);
    else if (!file.includes('/.git/') && isOnPurposeFile(file)) onPurpose.add(file);
  }
  return { paths, onPurpose, gitDirs };
}

/** Whether classify makes something of `file` (a file, link or directory under the roots): what an index keeps of a directory's entries. */
export function isListed(file: string): boolean {
  if (file.endsWith('/.git/config')) return true;
  if (basename(file) === 'HEAD') return !file.includes('/.git/');
  return runsLaterPathOf(file) !== undefined || (!file.includes('/.git/') && isOnPurposeFile(file));
}

/** What is at `path` (links not followed), or undefined. */
function statsOf(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `dir` is a bare repository's git directory: HEAD, config and objects/ in it. */
const isBare = (dir: string) =>
  statsOf(join(dir, 'config'))?.isFile() === true && statsOf(join(dir, 'objects'))?.isDirectory() === true;

/** The scan (RunsLaterScan) of `roots` from the listing `files` (and its index, and when it began). Never throws. */
export function scanOf(
  roots: readonly string[],
  files: readonly string[],
  from: Pick<RunsLaterScan, 'index' | 'readAtMs' | 'source'> = {},
): RunsLaterScan {
  const { paths, onPurpose: onPurposeFiles, gitDirs } = classify(files);
  for (const dir of installedPackages()) if (roots.some((root) => isUnder(dir, root))) paths.add(dir);
  const present = new Map<string, string>();
  for (const path of paths) {
    const identity = identityOf(path);
    if (identity !== undefined) present.set(path, identity);
  }
  const onPurpose = new Map([...onPurposeFiles].map((file) => [file, fingerprint(file)]));
  // A git directory stays writable (objects, refs, index, HEAD: the child's own commits and pushes); a `.git` file is walled.
  const walled = [...present.keys()].filter(
    (path) => (basename(path) !== '.git' && !gitDirs.has(path)) || statsOf(path)?.isFile() === true,
  );
  return { walled, present, onPurpose, ...from };
}
