import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MmauthError } from '../errors.js';

/**
 * What the sandbox's engine needs on this machine (its platform; on Linux bubblewrap, socat and
 * ripgrep on PATH), where those programs are, and the error for an engine that cannot run.
 */

/** The programs the engine runs on Linux, from the system (never bundled or downloaded), with their Debian package. */
const LINUX_PROGRAMS: ReadonlyArray<readonly [program: string, debianPackage: string]> = [
  ['bwrap', 'bubblewrap'],
  ['socat', 'socat'],
  ['rg', 'ripgrep'],
];

/** Where `program` is on env's PATH: the first directory's that holds an executable file of that name. */
function onPath(env: NodeJS.ProcessEnv, program: string): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, program);
    try {
      accessSync(path, constants.X_OK);
      if (statSync(path).isFile()) return path;
    } catch {
      // Not here: the next directory.
    }
  }
  return undefined;
}

/** `sandbox_unavailable`: exec --sandbox cannot run the program (`message`), details.reason `reason` and `extra`. */
export function sandboxUnavailable(message: string, reason: string, extra: Record<string, string> = {}): MmauthError {
  return new MmauthError('sandbox_unavailable', `exec --sandbox cannot run the program: ${message}`, {
    details: { reason, ...extra },
  });
}

/**
 * Throws `sandbox_unavailable` (details.reason `platform`, or `missing` with details.packages) where
 * the engine cannot run: a platform other than Linux and macOS, or on Linux a program it needs
 * missing from PATH (bwrap, socat, rg), each named with its Debian package. Nothing has run then.
 */
export function assertEngineCanRun(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): void {
  if (platform === 'darwin') return;
  if (platform !== 'linux') throw sandboxUnavailable(`it runs on Linux and macOS, not ${platform}`, 'platform');
  const missing = LINUX_PROGRAMS.filter(([program]) => onPath(env, program) === undefined);
  if (missing.length === 0) return;
  const names = missing.map(([program, pkg]) => `${program} (package ${pkg})`).join(', ');
  throw sandboxUnavailable(`${names} not on PATH`, 'missing', { packages: missing.map(([, pkg]) => pkg).join(' ') });
}

/** The engine's bwrapPath and socatPath: where env's PATH has them (undefined: the engine looks, and says what is missing). */
export function enginePrograms(env: NodeJS.ProcessEnv): { bwrapPath?: string; socatPath?: string } {
  const bwrapPath = onPath(env, 'bwrap');
  const socatPath = onPath(env, 'socat');
  return { ...(bwrapPath === undefined ? {} : { bwrapPath }), ...(socatPath === undefined ? {} : { socatPath }) };
}
