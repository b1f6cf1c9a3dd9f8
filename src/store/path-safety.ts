import { lstatSync, type Stats } from 'node:fs';
import { MmauthError } from '../errors.js';

/** What a path looks like on disk, or undefined when it does not exist. */
function lstatOrNone(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT') return undefined;
    throw new MmauthError('store_unreadable', `cannot inspect ${path}`, { cause: error });
  }
}

function insecure(message: string): MmauthError {
  return new MmauthError('store_insecure', message);
}

/**
 * Refuses a config directory or file that another user could have planted or can change, as ssh
 * does for its config: a symbolic link, an owner other than this user, or write access for group
 * or others. Throws `store_insecure` naming the path (and the owner's uid); a path that does not
 * exist passes. Returns the file's mode bits when it exists. POSIX only (no uids on Windows).
 */
export function assertSafePath(path: string, kind: 'directory' | 'file' | 'lock'): number | undefined {
  const stats = lstatOrNone(path);
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink()) {
    throw insecure(`the config ${kind} ${path} is a symbolic link; mmauth does not follow links for its config`);
  }
  if (kind === 'lock' || process.platform === 'win32' || typeof process.getuid !== 'function')
    return stats.mode & 0o777;
  const uid = process.getuid();
  if (stats.uid !== uid) {
    throw insecure(`the config ${kind} ${path} belongs to uid ${stats.uid}, not to this user (uid ${uid})`);
  }
  if ((stats.mode & 0o022) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
    throw insecure(`the config ${kind} ${path} can be written by others (mode ${mode})`);
  }
  return stats.mode & 0o777;
}
