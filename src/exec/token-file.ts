import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { MmauthError } from '../errors.js';
import { replacePrivateFile } from '../util/private-file.js';
import { readRegularFile } from '../util/read-regular-file.js';
import { markRun, pidFileOf } from './dead-runs.js';

/** The private directory of one `exec` run and the token file in it. */
export interface TokenFile {
  /** The directory (0700), removed by remove(). */
  readonly dir: string;
  /** The file (0600) holding the current access token and a newline. */
  readonly path: string;
  /** Replaces the file's content atomically (a new file renamed over the old): a reader never sees half a token. */
  write(accessToken: string): void;
  /** Removes the directory and everything in it; idempotent, never throws. */
  remove(): void;
}

/** This user's uid, or `fallback` where there are none (Windows). */
export const myUid = (fallback: number) => (typeof process.getuid === 'function' ? process.getuid() : fallback);

/** Whether `dir` is a directory (no link) of this user's with mode 0700. Never throws. */
export function isPrivateDirectory(dir: string): boolean {
  try {
    const stats = lstatSync(dir);
    return stats.isDirectory() && stats.uid === myUid(stats.uid) && (stats.mode & 0o777) === 0o700;
  } catch {
    return false;
  }
}

/**
 * Whether another user could swap what is put in `dir` (attacks N8): it must be this user's and
 * writable by nobody else, or root's with the sticky bit (as /tmp is), where only the owner of an
 * entry may rename or remove it.
 */
export function isSafeParent(dir: string): boolean {
  try {
    const stats = lstatSync(dir);
    if (!stats.isDirectory()) return false;
    if (stats.uid === myUid(stats.uid) && (stats.mode & 0o022) === 0) return true;
    return stats.uid === 0 && (stats.mode & 0o1000) !== 0;
  } catch {
    return false;
  }
}

/**
 * Where the private directory goes: `XDG_RUNTIME_DIR` when it is set and is a
 * directory of this user's with mode 0700, else the system temporary directory, which must be
 * safe (isSafeParent). Throws `store_insecure` naming it and TMPDIR otherwise.
 */
export function privateParent(env: NodeJS.ProcessEnv): string {
  const runtime = env.XDG_RUNTIME_DIR;
  // Not there, or not this user's alone: the temporary directory instead.
  if (runtime !== undefined && runtime !== '' && isPrivateDirectory(runtime)) return runtime;
  const temporary = tmpdir();
  if (!isSafeParent(temporary)) {
    throw new MmauthError(
      'store_insecure',
      `the temporary directory ${temporary} can be written by others and has no sticky bit: exec keeps no token there`,
      { hint: 'set TMPDIR (or XDG_RUNTIME_DIR) to a directory of yours that only you can write' },
    );
  }
  return temporary;
}

/** The names of this user's runtime roots in a parent: `mmauth-<uid>`, or `mmauth-<uid>-XXXXXX`. */
function isRootName(name: string): boolean {
  const own = `mmauth-${myUid(0)}`;
  return name === own || name.startsWith(`${own}-`);
}

/**
 * This user's runtime root in `parent` (which must be safe: privateParent): the directory every
 * run's private directory is made in (exec's token files, a proxy's socket, a sandbox's temp dir),
 * so that `exec --sandbox` hides them all, those made after its child started too, with one
 * directory that never goes away. It is `mmauth-<uid>` (0700, made when missing, as tmux's
 * `/tmp/tmux-<uid>`); when another user took that name first, a directory of this user's named
 * `mmauth-<uid>-XXXXXX` (mkdtemp), found again by its name. Throws only what the file system throws.
 */
export function runtimeRootIn(parent: string): string {
  const fixed = join(parent, `mmauth-${myUid(0)}`);
  try {
    mkdirSync(fixed, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (isPrivateDirectory(fixed)) return fixed;
  const fallback = readdirSync(parent).find(
    (name) => isRootName(name) && name !== basename(fixed) && isPrivateDirectory(join(parent, name)),
  );
  return fallback === undefined ? mkdtempSync(`${fixed}-`) : join(parent, fallback);
}

/**
 * This user's runtime roots that exist in `parents` (each a directory of this user's, mode 0700,
 * named as runtimeRootIn names them). Never throws: a parent it cannot read has none.
 */
export function runtimeRootsIn(parents: readonly string[]): string[] {
  return parents.flatMap((parent) => {
    try {
      return runtimeRootsAmong(parent, readdirSync(parent));
    } catch {
      return [];
    }
  });
}

/** This user's runtime roots among `names`, entries of `parent` already listed (runtimeRootsIn's test). Never throws. */
export const runtimeRootsAmong = (parent: string, names: readonly string[]): string[] =>
  names.filter((name) => isRootName(name) && isPrivateDirectory(join(parent, name))).map((name) => join(parent, name));

/**
 * Where this user's runtime roots are found without a record: `XDG_RUNTIME_DIR` as `env` has it,
 * `/run/user/<uid>` (where a login session's runtime directory is, whatever this run's environment
 * says), the temporary directory as `env` has it and the usual ones (`/tmp`, `/var/tmp`, `/dev/shm`).
 */
export function usualRuntimeParents(env: NodeJS.ProcessEnv): string[] {
  const candidates = [env.XDG_RUNTIME_DIR, tmpdir(), ...fixedRuntimeParents()];
  return [...new Set(candidates.filter((dir): dir is string => dir !== undefined && dir !== ''))];
}

/** The places whatever any environment says: a login session's runtime directory and the system's temporary ones. */
const fixedRuntimeParents = () => [`/run/user/${myUid(0)}`, '/tmp', '/var/tmp', '/dev/shm'];

/** The record of other parents this user's runs used (a TMPDIR or XDG_RUNTIME_DIR of their own), in the root under /tmp. */
function parentRecord(): string | undefined {
  try {
    return isSafeParent('/tmp') ? join(runtimeRootIn('/tmp'), 'parents') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records `parent` when it is none of the fixed places (fixedRuntimeParents), so that `exec --sandbox`
 * run from another environment (cron, `su`, another TMPDIR) hides the roots in it too. Never throws.
 */
export function recordRuntimeParent(parent: string): void {
  if (fixedRuntimeParents().includes(parent)) return;
  const record = parentRecord();
  const recorded = recordedRuntimeParents();
  if (record === undefined || recorded.includes(parent)) return;
  try {
    // Parents gone since (a TMPDIR removed) are dropped as the record is written again.
    const kept = [...recorded.filter((dir) => existsSync(dir)), parent];
    replacePrivateFile(record, `${kept.join('\n')}\n`, `${record}.${randomBytes(6).toString('hex')}`);
  } catch {
    // Only the sandbox's reach depends on it, and the sandbox hides the usual places whatever it says.
  }
}

/** The parents recordRuntimeParent recorded (absolute paths). Never throws. */
export function recordedRuntimeParents(): string[] {
  const record = parentRecord();
  if (record === undefined) return [];
  try {
    return readRegularFile(record, 64 * 1024)
      .split('\n')
      .filter((line) => line.startsWith('/'));
  } catch {
    return [];
  }
}

/** A private directory (0700) of one run's, and its removal (which never throws). */
export interface PrivateDir {
  path: string;
  remove(): void;
}

/**
 * Creates a private directory (0700, mkdtemp: a new random name starting with `prefix`) in this
 * user's runtime root (runtimeRootIn) under privateParent(`env`), that parent recorded when unusual
 * (recordRuntimeParent). Throws what privateParent throws,
 * or the file system's error when the root cannot be made.
 */
export function createPrivateDir(env: NodeJS.ProcessEnv, prefix: string): PrivateDir {
  const parent = privateParent(env);
  recordRuntimeParent(parent);
  const path = mkdtempSync(join(runtimeRootIn(parent), prefix));
  markRun(path);
  return {
    path,
    remove() {
      try {
        rmSync(path, { recursive: true, force: true });
        rmSync(pidFileOf(path), { force: true });
      } catch {
        // A failed clean-up never replaces the run's outcome; the directory is the user's alone.
      }
    },
  };
}

/** Creates one run's private directory (0700, mkdtemp: a new random name) and its token file (0600) holding `accessToken`. */
export function createTokenFile(env: NodeJS.ProcessEnv, accessToken: string): TokenFile {
  const privateDir = createPrivateDir(env, 'mmauth-exec-');
  const dir = privateDir.path;
  const path = join(dir, 'token');
  const file: TokenFile = {
    dir,
    path,
    write(token) {
      replacePrivateFile(path, `${token}\n`, join(dir, `.token-${randomBytes(8).toString('hex')}`));
    },
    remove: () => privateDir.remove(),
  };
  file.write(accessToken);
  return file;
}
