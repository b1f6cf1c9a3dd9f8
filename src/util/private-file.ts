import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * Writes `text` (UTF-8) into a new file at `path` with `mode` (default 0600), created exclusively
 * and never through a link (O_CREAT | O_EXCL | O_NOFOLLOW). Throws what open and write throw
 * (EEXIST when something stands at `path`, ELOOP for a link).
 */
export function writeNewFile(path: string, text: string, mode = 0o600): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path`'s content with `text` whole or not at all: a new private file (writeNewFile)
 * at `temporary` — by default beside `path`, a random name — renamed over `path`. A reader never
 * sees half a file; a kill leaves the old one (and, at worst, the temporary file). Throws what
 * writing and renaming throw, the temporary file removed first.
 */
export function replacePrivateFile(
  path: string,
  text: string,
  temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`,
): void {
  try {
    writeNewFile(temporary, text);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
