import { statSync } from 'node:fs';

/**
 * A file's identity and version as one string (inode, size, mtime in ns: one `stat`, microseconds):
 * it changes when the file is replaced by a rename or written; `missing` when there is no file.
 */
export function fileSignature(path: string): string {
  try {
    const stats = statSync(path, { bigint: true });
    return `${stats.ino}:${stats.size}:${stats.mtimeNs}`;
  } catch {
    return 'missing';
  }
}
