import { MmauthError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { IrregularFileError, readRegularFile } from '../util/read-regular-file.js';

/** The largest config file mmauth reads (a planted huge file is refused, never read: attacks N16). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** What config.json holds: the profiles (raw JSON, by name), the current profile, the approved directory files. */
export interface ConfigFileContent {
  profiles: Map<string, unknown>;
  current: string | undefined;
  /** Path of an approved `.mmauth-profile` → the content approved (attacks N12). */
  approved: Map<string, string>;
}

/**
 * Reads config.json at `path` (a regular file of at most 16 MiB, opened without blocking: attacks
 * N16, N28); an absent file is empty. Profile names are data, never object keys: `__proto__` or
 * `constructor` is a name like any other. Throws `store_malformed` (not JSON, not an object,
 * `profiles` not an object) or `store_unreadable` (naming the reason: EACCES, EISDIR, a FIFO, too large).
 */
export function readConfigFile(path: string): ConfigFileContent {
  let store: unknown;
  try {
    store = JSON.parse(readRegularFile(path, MAX_CONFIG_BYTES));
  } catch (error) {
    if (isMissing(error)) return { profiles: new Map(), current: undefined, approved: new Map() };
    throw describeReadFailure(path, error);
  }
  if (!isRecord(store)) {
    throw new MmauthError('store_malformed', `config file ${path} is malformed: it must hold a JSON object`);
  }
  const profiles = store.profiles ?? {};
  if (!isRecord(profiles)) {
    throw new MmauthError('store_malformed', `config file ${path} is malformed: "profiles" must be an object`);
  }
  const current = typeof store.current_profile === 'string' ? store.current_profile : undefined;
  const approvedJson = isRecord(store.approved_directory_files) ? store.approved_directory_files : {};
  const approved = new Map(
    Object.entries(approvedJson).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  return { profiles: new Map(Object.entries(profiles)), current, approved };
}

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

function describeReadFailure(path: string, error: unknown): MmauthError {
  if (error instanceof IrregularFileError) {
    const why = error.kind === 'directory' ? 'EISDIR' : error.kind === undefined ? 'too large' : `a ${error.kind}`;
    return new MmauthError('store_unreadable', `cannot read config file ${path} (${why})`, { cause: error });
  }
  if (error instanceof SyntaxError) {
    return new MmauthError('store_malformed', `config file ${path} is not valid JSON (${error.message})`, {
      cause: error,
    });
  }
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return new MmauthError('store_unreadable', `cannot read config file ${path}${code ? ` (${code})` : ''}`, {
    cause: error,
  });
}
