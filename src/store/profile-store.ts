import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import envPaths from 'env-paths';
import { MmauthError, type ErrorCode } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { lockConfig } from './config-lock.js';
import { assertSafePath } from './path-safety.js';
import { emptyProfile, parseProfile, ProfileFormatError, serializeProfile, type Profile } from './profile.js';

/** Profiles on disk: one JSON file (mode 0600) in a directory of its own (mode 0700). */
export interface ProfileStore {
  /** Absolute path of the config file. */
  readonly path: string;
  /** The named profile, or undefined when there is none. Throws `store_malformed`/`store_unreadable` for a bad file. */
  read(name: string): Profile | undefined;
  /** Every profile, sorted by name. Throws `store_malformed`/`store_unreadable` for a bad file. */
  list(): Array<{ name: string; profile: Profile }>;
  /**
   * Read-modify-write of one profile under an exclusive lock (`config.json.lock`, proper-lockfile),
   * so parallel mmauth processes writing different profiles lose none: `change` gets the current
   * profile (an empty one when there is none) and returns the new one, or undefined to delete it.
   * `change` may be async (a renewal asks the server under the lock, LOCK_HOLD_MAX_MS at most); a
   * throw from it leaves the file untouched. Other profiles are untouched; the file is replaced
   * atomically. Throws `store_lock_failed` when the lock cannot be had within LOCK_WAIT_MS,
   * `store_write_failed` when the file cannot be written.
   */
  update(
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
  ): Promise<Profile | undefined>;
}

/** A failure of the config file (unreadable, malformed, not writable, locked); the file is left untouched. */
function storeError(code: Extract<ErrorCode, `store_${string}`>, message: string, cause?: unknown): MmauthError {
  return new MmauthError(code, message, { cause });
}

/** Where the config lives: MMAUTH_CONFIG_DIR, or the platform's config directory (conf/env-paths). */
export interface StoreLocation {
  /** MMAUTH_CONFIG_DIR when set. */
  configDir: string | undefined;
  /** Told, for people, what the store notices but does not fail on (a loose mode, a lock being waited for). */
  onWarning?: (message: string) => void;
}

/** The config file's absolute path: `config.json` in MMAUTH_CONFIG_DIR, else where conf puts it (env-paths). */
function configFilePath(location: StoreLocation): string {
  return resolve(location.configDir ?? envPaths('mmauth', { suffix: '' }).config, 'config.json');
}

/**
 * Opens the profile store: `config.json` in MMAUTH_CONFIG_DIR or `~/.config/mmauth` (platform
 * equivalent, as conf and env-paths place it). Reads parse the file directly; `conf` (and its
 * schema validator, about 20 ms to load) is loaded only by update(), which writes through it. The
 * directory is made 0700 and the file 0600 on every write. A corrupt file throws `store_malformed`
 * and is never rewritten.
 */
export async function openProfileStore(location: StoreLocation): Promise<ProfileStore> {
  const path = configFilePath(location);
  const warn = location.onWarning ?? (() => undefined);
  let isLooseModeSaid = false;
  /** The directory and the file must be this user's and not writable by others; a readable file is said once. */
  const checkPaths = () => {
    assertSafePath(dirname(path), 'directory');
    const mode = assertSafePath(path, 'file');
    if (mode !== undefined && (mode & 0o077) !== 0 && !isLooseModeSaid) {
      isLooseModeSaid = true;
      const octal = mode.toString(8).padStart(4, '0');
      warn(`config file ${path} is readable by others (mode ${octal}); mmauth makes it 0600 at its next write`);
    }
  };
  const secureDirectory = () => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
  };

  // Profile names are data, never object keys: `__proto__` or `constructor` is a name like any other.
  const readAll = (): Map<string, unknown> => {
    checkPaths();
    let store: unknown;
    try {
      store = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      if (isMissing(error)) return new Map();
      throw describeReadFailure(path, error);
    }
    if (!isRecord(store)) {
      throw storeError('store_malformed', `config file ${path} is malformed: it must hold a JSON object`);
    }
    const profiles = store.profiles ?? {};
    if (!isRecord(profiles)) {
      throw storeError('store_malformed', `config file ${path} is malformed: "profiles" must be an object`);
    }
    return new Map(Object.entries(profiles));
  };
  const parse = (name: string, json: unknown): Profile => {
    try {
      return parseProfile(json, `profiles.${name}`);
    } catch (error) {
      if (error instanceof ProfileFormatError) {
        throw storeError('store_malformed', `config file ${path} is malformed: ${error.message}`, error);
      }
      throw error;
    }
  };

  /** The read-modify-write itself; the caller holds the lock. */
  const writeProfile = async (
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
  ): Promise<Profile | undefined> => {
    const all = readAll();
    const raw = all.get(name);
    const next = await change(raw === undefined ? emptyProfile() : parse(name, raw));
    if (next === undefined) {
      all.delete(name);
    } else {
      all.set(name, serializeProfile(next));
    }
    // Object.fromEntries defines own properties, so even `__proto__` is written as a name.
    const profiles = Object.fromEntries(all);
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
      // conf writes a temporary file and renames it over config.json, so a reader never sees half a
      // file, except under SNAP, where it writes in place: the write must be atomic everywhere.
      withoutSnap(() => conf.set('profiles', profiles));
      chmodSync(path, 0o600);
    } catch (error) {
      throw storeError(
        'store_write_failed',
        `cannot write config file ${path}: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
    }
    return next;
  };

  return {
    path,
    read(name) {
      const raw = readAll().get(name);
      return raw === undefined ? undefined : parse(name, raw);
    },
    list() {
      return [...readAll()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, raw]) => ({ name, profile: parse(name, raw) }));
    },
    async update(name, change) {
      checkPaths();
      secureDirectory();
      const release = await lockConfig(path, warn);
      try {
        return await writeProfile(name, change);
      } finally {
        await release().catch(() => undefined);
      }
    },
  };
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

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

function describeReadFailure(path: string, error: unknown): MmauthError {
  if (error instanceof SyntaxError) {
    return storeError('store_malformed', `config file ${path} is not valid JSON (${error.message})`, error);
  }
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return storeError('store_unreadable', `cannot read config file ${path}${code ? ` (${code})` : ''}`, error);
}
