import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Why readRegularFile gave nothing: the path is no regular file (a FIFO, a device, a directory, a link), or too large. */
export class IrregularFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'not_regular' | 'too_large',
    readonly sizeBytes?: number,
    /** What it is instead: `directory` (EISDIR), `FIFO`, `device`, `socket`; undefined when too large. */
    readonly kind?: string,
  ) {
    super(
      reason === 'not_regular'
        ? `${path} is ${kind === undefined ? 'not a regular file' : `a ${kind}, not a regular file`}`
        : `${path} is larger than mmauth reads (${sizeBytes ?? '?'} bytes)`,
    );
  }
}

/**
 * Reads a file whole only when it is a regular file of at most `maxBytes` (attacks N16, N28): it is
 * opened without following a link and without blocking (a planted FIFO cannot hang the read), then
 * fstat'ed, then read. Returns its text (`encoding`). Throws IrregularFileError, or the open's
 * error (ENOENT, ELOOP for a link, EACCES) as Node gives it.
 */
export function readRegularFile(path: string, maxBytes: number, encoding: BufferEncoding = 'utf8'): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      const kind = stats.isDirectory() ? 'directory' : stats.isFIFO() ? 'FIFO' : stats.isSocket() ? 'socket' : 'device';
      throw new IrregularFileError(path, 'not_regular', undefined, kind);
    }
    if (stats.size > maxBytes) throw new IrregularFileError(path, 'too_large', stats.size);
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes));
    let read = 0;
    while (read < buffer.length) {
      const bytes = readSync(fd, buffer, read, buffer.length - read, read);
      if (bytes === 0) break;
      read += bytes;
    }
    return buffer.toString(encoding, 0, read);
  } finally {
    closeSync(fd);
  }
}
