import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import envPaths from 'env-paths';
import { isMmauthError, MmauthError, type ErrorCode } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { lockConfig } from './config-lock.js';
import { assertSafePath } from './path-safety.js';
import { createCredentialVault } from './credential-vault.js';
import { keyringName, openOsKeyring, type Keyring } from './keyring.js';
import {
  emptyProfile,
  listProfile,
  parseProfile,
  parseSealed,
  ProfileFormatError,
  secretsOf,
  serializeProfile,
  type CredentialStoreRecord,
  type ListedProfile,
  type Profile,
} from './profile.js';
import { presentFields, type SealedSecrets } from './secrets.js';

/** Where new credentials are written (MMAUTH_CREDENTIAL_STORE): the keyring when there is one, the keyring or fail, the file. */
export type CredentialStoreSetting = 'auto' | 'keyring' | 'file';

/** What a write may say about where its credentials go. */
export interface WriteIntent {
  /** `--insecure-storage`: this write keeps the credentials in the file, in plain text, on purpose. */
  insecureStorage?: boolean | undefined;
  /**
   * Called when, under `auto`, no keyring could be used and the credentials went to the file in
   * plain text; `reason` says why. Storing commands pass it (and say so); renewal does not.
   */
  onFileFallback?: ((reason: string) => void) | undefined;
}

/** How read() treats sealed credentials whose key is gone: throw `credentials_lost`, or leave them out. */
export interface ReadOptions {
  /** For the commands that get credentials anew (login, client-credentials): the profile without them. */
  ifCredentialsLost?: 'omit';
}

/** Profiles on disk: one JSON file (mode 0600) in a directory of its own (mode 0700). */
export interface ProfileStore {
  /** Absolute path of the config file. */
  readonly path: string;
  /**
   * The named profile, or undefined when there is none; sealed credentials are opened through the
   * keyring. Throws `store_malformed`/`store_unreadable` for a bad file, `credentials_lost` when
   * the keyring answers that their key is gone (unless `ifCredentialsLost: 'omit'`), and
   * `keyring_unavailable`/`keyring_failed` when the keyring cannot be asked.
   */
  read(name: string, options?: ReadOptions): Promise<Profile | undefined>;
  /** Every profile, sorted by name, without opening sealed credentials. Throws `store_malformed`/`store_unreadable`. */
  list(): Array<{ name: string; profile: ListedProfile }>;
  /** The names of the profiles, sorted. */
  names(): string[];
  /** The keyring's name, for people. */
  readonly keyringName: string;
  /**
   * Checks, before a storing command does its work, that the credentials it will store for `name`
   * can go where they must: when they must go to the keyring (MMAUTH_CREDENTIAL_STORE=keyring, or
   * a profile already in the keyring) the keyring is asked once. Throws
   * `keyring_unavailable`/`keyring_failed`; under `auto` a profile that may fall back passes.
   */
  assertCanStore(name: string, intent?: WriteIntent): Promise<void>;
  /** Asks the keyring once (`mmauth doctor`). Throws `keyring_unavailable`/`keyring_failed`. */
  probeKeyring(): Promise<void>;
  /**
   * Read-modify-write of one profile under an exclusive lock (`config.json.lock`, proper-lockfile),
   * so parallel mmauth processes writing different profiles lose none: `change` gets the current
   * profile (an empty one when there is none) and returns the new one, or undefined to delete it.
   * `change` may be async (a renewal asks the server under the lock, LOCK_HOLD_MAX_MS at most); a
   * throw from it leaves the file untouched. Other profiles are untouched; the file is replaced
   * atomically. Credentials are sealed with a key in the keyring or written in plain text as
   * `MMAUTH_CREDENTIAL_STORE`, `intent` and the profile's record decide (decisions 24; README
   * "Where credentials live"); a key no profile uses any more is removed from the keyring after the
   * write. Throws `store_lock_failed` when the lock cannot be had within LOCK_WAIT_MS,
   * `store_write_failed` when the file cannot be written, `keyring_unavailable`/`keyring_failed`
   * when the credentials must go to a keyring that cannot take them (nothing is written then).
   */
  update(
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
    intent?: WriteIntent,
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
  /** Where new credentials are written; `auto` when not given. */
  credentialStore?: CredentialStoreSetting;
  /** The platform, for the keyring's name. */
  platform?: NodeJS.Platform;
  /** The OS keyring (default: `@napi-rs/keyring`, loaded at first use); tests may give another. */
  openKeyring?: () => Promise<Keyring>;
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
  const platform = location.platform ?? process.platform;
  const vault = createCredentialVault(keyringName(platform), location.openKeyring ?? (() => openOsKeyring(platform)));
  const setting = location.credentialStore ?? 'auto';

  /** Runs a parser, turning its ProfileFormatError into `store_malformed`. */
  const parsing = <T>(parse: () => T): T => {
    try {
      return parse();
    } catch (error) {
      if (error instanceof ProfileFormatError) {
        throw storeError('store_malformed', `config file ${path} is malformed: ${error.message}`, error);
      }
      throw error;
    }
  };
  const where = (name: string) => `profiles.${name}`;
  /** One stored profile with its sealed credentials opened; `lost: 'omit'` leaves out credentials whose key is gone. */
  const open = async (name: string, raw: unknown, lost?: 'omit'): Promise<Profile> => {
    const sealed = parsing(() => parseSealed(raw, where(name)));
    if (sealed === undefined) return parsing(() => parseProfile(raw, where(name)));
    try {
      const secrets = await vault.open(name, sealed);
      return parsing(() => parseProfile(raw, where(name), secrets));
    } catch (error) {
      if (lost === 'omit' && isMmauthError(error) && error.code === 'credentials_lost') {
        return parsing(() => parseProfile(raw, where(name)));
      }
      throw error;
    }
  };
  const keyIdsOf = (all: Map<string, unknown>): Set<string> => {
    const ids = new Set<string>();
    for (const [name, raw] of all) {
      const keyId = parsing(() => parseSealed(raw, where(name)))?.keyId;
      if (keyId !== undefined) ids.add(keyId);
    }
    return ids;
  };

  /**
   * Where a write's credentials go: the file (asked for, or a profile that chose it under `auto`),
   * the keyring or nothing (MMAUTH_CREDENTIAL_STORE=keyring, or a profile already in the keyring:
   * never a plain-text copy), or the keyring when there is one (`auto`, a new or fallen-back profile).
   */
  const destinationOf = (
    prior: CredentialStoreRecord | undefined,
    intent: WriteIntent,
  ): 'file' | 'keyring' | 'keyring_or_file' => {
    const chosen = intent.insecureStorage === true ? 'file' : setting;
    if (chosen === 'file' || (chosen === 'auto' && prior === 'file')) return 'file';
    return chosen === 'keyring' || prior === 'keyring' ? 'keyring' : 'keyring_or_file';
  };

  /**
   * Where `next`'s credentials go and in what form: sealed for the keyring, or plain text for the
   * file, with the record to keep (decisions 24). `prior` is the record on disk before this write.
   */
  const place = async (
    name: string,
    next: Profile,
    prior: CredentialStoreRecord | undefined,
    keyIds: Iterable<string>,
    intent: WriteIntent,
  ): Promise<{ record: CredentialStoreRecord | undefined; sealed: SealedSecrets | undefined }> => {
    const secrets = secretsOf(next);
    if (presentFields(secrets).length === 0) return { record: prior, sealed: undefined };
    const destination = destinationOf(prior, intent);
    if (destination === 'file') return { record: 'file', sealed: undefined };
    try {
      return { record: 'keyring', sealed: await vault.seal(name, secrets, keyIds) };
    } catch (error) {
      if (destination !== 'keyring_or_file' || !isMmauthError(error) || error.code !== 'keyring_unavailable')
        throw error;
      intent.onFileFallback?.(error.message);
      return { record: 'fallback', sealed: undefined };
    }
  };

  /** The read-modify-write itself; the caller holds the lock. */
  const writeProfile = async (
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
    intent: WriteIntent,
  ): Promise<Profile | undefined> => {
    const all = readAll();
    const raw = all.get(name);
    const formerKeyIds = keyIdsOf(all);
    const current = raw === undefined ? emptyProfile() : await open(name, raw, 'omit');
    const prior = current.credentialStore;
    const next = await change(current);
    if (next === undefined) {
      all.delete(name);
    } else {
      const ownKeyId = parsing(() => parseSealed(raw, where(name)))?.keyId;
      const keyIds = [...(ownKeyId === undefined ? [] : [ownKeyId]), ...formerKeyIds];
      const { record, sealed } = await place(name, next, prior, keyIds, intent);
      all.set(name, serializeProfile({ ...next, credentialStore: record }, sealed));
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
    // Only after the file no longer needs them: a kill before this point leaves a key unused, never a profile unreadable.
    const usedKeyIds = keyIdsOf(all);
    const unused = [...formerKeyIds].filter((keyId) => !usedKeyIds.has(keyId));
    if (unused.length > 0) {
      await vault.forget(unused).catch((error: unknown) => {
        warn(
          `could not remove an unused key from the ${vault.keyringName}: ${String(error instanceof Error ? error.message : error)}`,
        );
      });
    }
    return next;
  };

  return {
    path,
    keyringName: vault.keyringName,
    async read(name, options) {
      const raw = readAll().get(name);
      return raw === undefined ? undefined : open(name, raw, options?.ifCredentialsLost);
    },
    list() {
      return [...readAll()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, raw]) => ({ name, profile: parsing(() => listProfile(raw, where(name))) }));
    },
    names() {
      return [...readAll().keys()].sort();
    },
    probeKeyring: () => vault.check(),
    async assertCanStore(name, intent = {}) {
      const raw = readAll().get(name);
      const prior = raw === undefined ? undefined : parsing(() => listProfile(raw, where(name))).credentialStore;
      if (destinationOf(prior, intent) === 'keyring') await vault.check();
    },
    async update(name, change, intent = {}) {
      checkPaths();
      secureDirectory();
      const release = await lockConfig(path, warn);
      try {
        return await writeProfile(name, change, intent);
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
