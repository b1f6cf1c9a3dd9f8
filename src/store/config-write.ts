import { chmodSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MmauthError } from '../errors.js';

/**
 * Replaces `config.json` at `path` with `{profiles}` (and the current profile's name, when given:
 * `null` clears it; and the approved directory files, when given) through conf (initialised here, which reads never pay; bundled without its
 * schema validator: scripts/build.mjs), mode 0600. conf writes a temporary file, fsyncs and renames
 * it over the old one, so a reader never sees half a file. Throws `store_write_failed`.
 */
export async function writeConfigFile(
  path: string,
  profiles: Record<string, unknown>,
  currentProfile?: string | null,
  approvedDirectoryFiles?: Record<string, string>,
): Promise<void> {
  removeTemporaryFilesOfGoneWriters(path);
  const { default: Conf } = await import('conf');
  try {
    const conf = new Conf<Record<string, unknown>>({
      projectName: 'mmauth',
      cwd: dirname(path),
      configName: 'config',
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
      watch: false,
    });
    // Except under SNAP, where conf writes in place: the write must be atomic everywhere.
    // One assignment, one write (conf writes the whole file on every set: three sets were three fsyncs).
    const next: Record<string, unknown> = { ...conf.store, profiles };
    // undefined leaves the current profile as it is; null clears it.
    if (currentProfile === null) delete next.current_profile;
    else if (currentProfile !== undefined) next.current_profile = currentProfile;
    if (approvedDirectoryFiles !== undefined) next.approved_directory_files = approvedDirectoryFiles;
    // Except under SNAP, where conf writes in place: the write must be atomic everywhere.
    withoutSnap(() => {
      conf.store = next;
    });
    chmodSync(path, 0o600);
  } catch (error) {
    throw new MmauthError(
      'store_write_failed',
      `cannot write config file ${path}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** Runs `write` with SNAP unset: conf falls back to a non-atomic write when it is set. */
function withoutSnap(write: () => void): void {
  const snap = process.env.SNAP;
  delete process.env.SNAP;
  try {
    write();
  } finally {
    if (snap !== undefined) process.env.SNAP = snap;
  }
}

/** A temporary file of conf's atomic write (atomically: `<file>.tmp-<10 digits><6 hex>`). */
const TEMPORARY = /^\.tmp-\d{10}[0-9a-f]{6}$/;

/**
 * Removes the temporary files that writers killed mid-write left beside `path` (they hold what the
 * config held). Called under the store's lock, before this write's own: every write is made under
 * it, so any temporary file there now is of a writer that is gone. A file that cannot be removed
 * stays (the next write tries again).
 */
function removeTemporaryFilesOfGoneWriters(path: string): void {
  const name = basename(path);
  let entries: string[];
  try {
    entries = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(name) || !TEMPORARY.test(entry.slice(name.length))) continue;
    try {
      rmSync(join(dirname(path), entry), { force: true });
    } catch {
      // Left for the next write.
    }
  }
}
