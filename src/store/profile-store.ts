import { chmodSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import envPaths from 'env-paths';
import { isMmauthError, MmauthError, type ErrorCode } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { readConfigFile } from './config-file.js';
import { lockConfig } from './config-lock.js';
import { assertSafePath } from './path-safety.js';
import { writeConfigFile } from './config-write.js';
import { createCredentialPlacement } from './credential-placement.js';
import { createCredentialVault } from './credential-vault.js';
import { keyringName, openOsKeyring } from './keyring.js';
import { accessTokenRefOf, parseProfile, parseSealed, serializeProfile } from './profile-json.js';
import { ProfileFormatError } from './stored-values.js';
import { listProfile } from './profile-listing.js';
import { emptyProfile, liveReplacedTokens, type Profile } from './profile.js';
import { bindingOf } from './secrets.js';
import type { ProfileStore, StoreLocation, WriteIntent } from './store-types.js';

export type { CredentialStoreSetting, ProfileStore, ReadOptions, StoreLocation, WriteIntent } from './store-types.js';

/** A failure of the config file (unreadable, malformed, not writable, locked); the file is left untouched. */
function storeError(code: Extract<ErrorCode, `store_${string}`>, message: string, cause?: unknown): MmauthError {
  return new MmauthError(code, message, { cause });
}

/** The default config directory, where conf puts it without MMAUTH_CONFIG_DIR (env-paths: `~/.config/mmauth` on Linux). */
export function defaultConfigDir(): string {
  return envPaths('mmauth', { suffix: '' }).config;
}

/** The config file's absolute path: `config.json` in MMAUTH_CONFIG_DIR, else where conf puts it (env-paths). */
function configFilePath(location: StoreLocation): string {
  return resolve(location.configDir ?? envPaths('mmauth', { suffix: '' }).config, 'config.json');
}

/**
 * Opens the profile store: `config.json` in MMAUTH_CONFIG_DIR or `~/.config/mmauth` (platform
 * equivalent, as conf and env-paths place it). Reads parse the file directly; `conf` is initialised
 * only by the writes (update() and the like), which go through it. The
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

  const readFile = () => {
    checkPaths();
    return readConfigFile(path);
  };
  const readAll = () => readFile().profiles;
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
      const json = isRecord(raw) ? raw : {};
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const secrets = await vault.open(bindingOf(name, text(json.base_url), text(json.client_id)), sealed);
      return parsing(() => parseProfile(raw, where(name), secrets));
    } catch (error) {
      if (lost === 'omit' && isMmauthError(error) && error.code === 'credentials_lost') {
        return parsing(() => parseProfile(raw, where(name)));
      }
      throw error;
    }
  };
  /** The keyring accounts the file refers to: keys of sealed profiles and access tokens' copies. */
  const accountsOf = (all: Map<string, unknown>): Set<string> => {
    const ids = new Set<string>();
    for (const [name, raw] of all) {
      const keyId = parsing(() => parseSealed(raw, where(name)))?.keyId;
      if (keyId !== undefined) ids.add(keyId);
      const ref = accessTokenRefOf(raw);
      if (ref !== undefined) ids.add(ref);
    }
    return ids;
  };
  const keyIdsOf = (all: Map<string, unknown>): string[] =>
    [...all].flatMap(([name, raw]) => parsing(() => parseSealed(raw, where(name)))?.keyId ?? []);

  const placement = createCredentialPlacement(vault, setting);
  /** Runs `write` under the config file's exclusive lock (after checking and securing the paths). */
  const locked = async <T>(write: () => Promise<T>, isInterruptible = true): Promise<T> => {
    checkPaths();
    secureDirectory();
    const release = await lockConfig(path, warn, isInterruptible ? location.interrupt : undefined);
    try {
      return await write();
    } finally {
      await release().catch(() => undefined);
    }
  };
  const { destinationOf } = placement;

  /** The read-modify-write itself; the caller holds the lock. */
  const writeProfile = async (
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
    intent: WriteIntent,
    newName = name,
  ): Promise<Profile | undefined> => {
    const { profiles: all, current: currentName } = readFile();
    const raw = all.get(name);
    if (raw === undefined && intent.mustExist === true) return undefined;
    const formerAccounts = accountsOf(all);
    const current = raw === undefined ? emptyProfile() : await open(name, raw, 'omit');
    const prior = {
      record: current.credentialStore,
      accessToken: current.token?.accessToken,
      ref: accessTokenRefOf(raw),
      binding: bindingOf(name, current.baseUrl, current.clientId),
    };
    const changed = await change(current);
    // Replaced tokens are kept only while they live.
    const next =
      changed?.replacedTokens === undefined
        ? changed
        : { ...changed, replacedTokens: liveReplacedTokens(changed.replacedTokens, Date.now()) };
    // A rename re-seals under the new name (the blob is bound to it); the current pointer follows it.
    if (newName !== name) all.delete(name);
    if (next === undefined) {
      all.delete(name);
    } else {
      const ownKeyId = parsing(() => parseSealed(raw, where(name)))?.keyId;
      const keyIds = [...(ownKeyId === undefined ? [] : [ownKeyId]), ...keyIdsOf(all)];
      const { record, sealed, ref } = await placement.place(newName, next, prior, keyIds, intent);
      all.set(newName, serializeProfile({ ...next, credentialStore: record }, sealed, ref));
    }
    const pointer =
      currentName !== name ? undefined : next === undefined ? null : newName !== name ? newName : undefined;
    // Object.fromEntries defines own properties, so even `__proto__` is written as a name.
    const profiles = Object.fromEntries(all);
    await writeConfigFile(path, profiles, pointer);
    // Only after the file no longer names them: a kill before this point leaves an item unused, never a profile unreadable.
    const usedAccounts = accountsOf(all);
    const unused = [...formerAccounts].filter((account) => !usedAccounts.has(account));
    if (unused.length > 0) {
      await vault.forget(unused).catch((error: unknown) => {
        warn(
          `could not remove what no profile uses any more from the ${vault.keyringName}: ${String(error instanceof Error ? error.message : error)}`,
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
    listOne(name) {
      const raw = readAll().get(name);
      return raw === undefined ? undefined : parsing(() => listProfile(raw, where(name)));
    },
    async readAccessToken(name, listed) {
      const token = listed.token;
      if (token === undefined) return undefined;
      if (token.plainAccessToken !== undefined) return token.plainAccessToken;
      const binding = bindingOf(name, listed.baseUrl, listed.clientId);
      return token.accessTokenRef === undefined ? undefined : vault.getCopy(token.accessTokenRef, binding);
    },
    async assertCanStore(name, intent = {}) {
      const raw = readAll().get(name);
      const prior = raw === undefined ? undefined : parsing(() => listProfile(raw, where(name))).credentialStore;
      if (destinationOf(prior, intent) === 'keyring') await vault.check();
    },
    update: (name, change, intent = {}) =>
      locked(() => writeProfile(name, change, intent), intent.holdsMinted !== true),
    currentProfile: () => readFile().current,
    approvedDirectoryFiles: () => readFile().approved,
    approveDirectoryFile: (filePath, content) =>
      locked(async () => {
        const { profiles, approved } = readFile();
        approved.set(filePath, content);
        await writeConfigFile(path, Object.fromEntries(profiles), undefined, Object.fromEntries(approved));
      }),
    setCurrentProfile: (name) =>
      locked(async () => {
        const { profiles } = readFile();
        await writeConfigFile(path, Object.fromEntries(profiles), name ?? null);
      }),
    rename: (oldName, newName) =>
      locked(async () => {
        const all = readAll();
        if (all.has(newName)) throw new MmauthError('profile_exists', `a profile "${newName}" exists already`);
        // Credentials that cannot be opened would be lost by the move: fail (credentials_lost) instead.
        const raw = all.get(oldName);
        if (raw !== undefined) await open(oldName, raw);
        return writeProfile(oldName, (current) => current, { isStoring: false }, newName);
      }),
  };
}
