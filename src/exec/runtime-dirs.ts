import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  isSafeParent,
  recordedRuntimeParents,
  runtimeRootIn,
  runtimeRootsAmong,
  usualRuntimeParents,
} from './token-file.js';

/**
 * mmauth's runtime directories in every place a run of this user's may have used (the usual runtime
 * and temporary directories, and those recorded by runs with a TMPDIR of their own): this user's runtime
 * roots (runtimeRootIn: every exec's, proxy's and sandbox's private directory is made in one, so a
 * run that starts after the child is hidden too), made here when missing so that none appears
 * unhidden later; and the agents' directories (`mmauth-agent-*`, which their agents never remove).
 * Nothing listed here goes away while the child runs: a denied path that vanished before the engine
 * mounted over it would stop the sandbox from starting.
 */
export function runtimeDirs(env: NodeJS.ProcessEnv): string[] {
  // Every place a run of this user's may have used, whatever this run's environment says.
  const parents = [...new Set([...usualRuntimeParents(env), ...recordedRuntimeParents()])].filter((dir) =>
    existsSync(dir),
  );
  for (const parent of parents) {
    try {
      if (isSafeParent(parent)) runtimeRootIn(parent);
    } catch {
      // A parent mmauth cannot write holds no runtime directory of its own either.
    }
  }
  // One listing of each parent for both (a shared /tmp can hold thousands of entries).
  const listings = parents.map((parent): [string, string[]] => {
    try {
      return [parent, readdirSync(parent)];
    } catch {
      return [parent, []];
    }
  });
  const agents = listings.flatMap(([parent, names]) =>
    names
      .filter((name) => name.startsWith('mmauth-agent-') && isDirectoryAt(join(parent, name)))
      .map((name) => join(parent, name)),
  );
  return [...listings.flatMap(([parent, names]) => runtimeRootsAmong(parent, names)), ...agents];
}

/** Whether `path` is a directory (not a link to one). Never throws. */
function isDirectoryAt(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
