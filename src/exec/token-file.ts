import { randomBytes } from 'node:crypto';
import { lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MmauthError } from '../errors.js';
import { replacePrivateFile } from '../util/private-file.js';

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

/**
 * Whether another user could swap what is put in `dir` (attacks N8): it must be this user's and
 * writable by nobody else, or root's with the sticky bit (as /tmp is), where only the owner of an
 * entry may rename or remove it.
 */
function isSafeParent(dir: string): boolean {
  try {
    const stats = lstatSync(dir);
    if (!stats.isDirectory()) return false;
    const uid = typeof process.getuid === 'function' ? process.getuid() : stats.uid;
    if (stats.uid === uid && (stats.mode & 0o022) === 0) return true;
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
  if (runtime !== undefined && runtime !== '') {
    try {
      const stats = lstatSync(runtime);
      const uid = typeof process.getuid === 'function' ? process.getuid() : stats.uid;
      if (stats.isDirectory() && stats.uid === uid && (stats.mode & 0o777) === 0o700) return runtime;
    } catch {
      // Not there: the temporary directory instead.
    }
  }
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

/** A private directory (0700) of one run's, and its removal (which never throws). */
export interface PrivateDir {
  path: string;
  remove(): void;
}

/**
 * Creates a private directory (0700, mkdtemp: a new random name starting with `prefix`) under
 * privateParent(`env`). Throws what privateParent throws.
 */
export function createPrivateDir(env: NodeJS.ProcessEnv, prefix: string): PrivateDir {
  const path = mkdtempSync(join(privateParent(env), prefix));
  return {
    path,
    remove() {
      try {
        rmSync(path, { recursive: true, force: true });
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
