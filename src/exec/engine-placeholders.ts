import { existsSync, lstatSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * What the sandbox engine walls in the working directory whether or not it exists (sandbox-runtime
 * 0.0.83's DANGEROUS_FILES and dangerous directories): where one is absent, the engine makes an
 * empty placeholder on the host to mount over, which is no regular file and which `git add -A`
 * refuses ("can only add regular files").
 */
const ENGINE_DENIED_NAMES = [
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.mcp.json',
  '.vscode',
  '.idea',
  '.claude/commands',
  '.claude/agents',
];

/**
 * Removes what a run killed before its clean-up left in `cwd`: the engine's placeholders, which are
 * empty read-only (0444) regular files at its denied names (a file of the user's is never empty
 * and read-only there), and a `.claude` directory they leave empty. Never throws.
 */
export function removeLeftPlaceholders(cwd: string): void {
  for (const name of ENGINE_DENIED_NAMES) removePlaceholder(join(cwd, name));
}

/**
 * Removes `path` (absolute) when it is one of the engine's placeholders: an empty read-only (0444)
 * regular file, which no file of the user's at those names is; and the `.claude` directory it leaves
 * empty (the only parent the engine's names have). Never throws.
 */
export function removePlaceholder(path: string): void {
  try {
    const stats = lstatSync(path);
    if (!stats.isFile() || stats.size !== 0 || (stats.mode & 0o777) !== 0o444) return;
    rmSync(path);
    if (basename(dirname(path)) === '.claude' && readdirSync(dirname(path)).length === 0) rmdirSync(dirname(path));
  } catch {
    // Not there, or not ours to remove.
  }
}

/** The engine's placeholders a run in `cwd` will meet: its denied names that are absent there now. */
export function enginePlaceholders(cwd: string): string[] {
  return ENGINE_DENIED_NAMES.filter((name) => !existsSync(join(cwd, name)));
}

/**
 * Git configuration (GIT_CONFIG_COUNT and its pairs, continuing any the environment has) that keeps
 * `placeholders` out of git inside the sandbox: a core.excludesFile in `tmpDir` holding the user's
 * own global excludes (`$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`) and the
 * placeholders, so that neither `git status` lists them nor `git add -A` trips on them. Empty when
 * there are none. Never throws: an excludes file it cannot write leaves git as it was.
 */
export function gitExcludingPlaceholders(
  placeholders: readonly string[],
  tmpDir: string,
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  if (placeholders.length === 0) return {};
  const configHome = env.XDG_CONFIG_HOME || (env.HOME === undefined ? undefined : join(env.HOME, '.config'));
  let own = '';
  try {
    if (configHome !== undefined) own = readFileSync(join(configHome, 'git', 'ignore'), 'utf8');
  } catch {
    own = '';
  }
  const file = join(tmpDir, 'git-excludes');
  try {
    writeFileSync(file, `${own}\n${placeholders.map((name) => `**/${name}`).join('\n')}\n`, { mode: 0o600 });
  } catch {
    return {};
  }
  const given = Number(env.GIT_CONFIG_COUNT ?? '0');
  const count = Number.isInteger(given) && given >= 0 ? given : 0;
  return {
    GIT_CONFIG_COUNT: String(count + 1),
    [`GIT_CONFIG_KEY_${count}`]: 'core.excludesFile',
    [`GIT_CONFIG_VALUE_${count}`]: file,
  };
}
