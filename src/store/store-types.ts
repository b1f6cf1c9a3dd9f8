import type { Keyring } from './keyring.js';
import type { ListedProfile } from './profile-listing.js';
import type { Profile } from './profile.js';

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
  /**
   * A storing command (login, client-credentials) with the user's choice of where credentials go.
   * Without it (a renewal, a forgotten token, a profile edit) a keyring profile stays in the
   * keyring whatever MMAUTH_CREDENTIAL_STORE says: credentials never leave it silently.
   */
  isStoring?: boolean | undefined;
  /**
   * A follow-up write (the chain's record cleared after a renewal): when no profile of that name
   * exists any more (removed or renamed meanwhile), nothing is written; never an empty profile
   * brought back under the old name (attacks N17).
   */
  mustExist?: boolean | undefined;
  /** Called when a storing command's explicit choice moves a keyring profile's credentials into the file. */
  onLeaveKeyring?: (() => void) | undefined;
  /**
   * The write stores what a request already sent has minted (a signed-in grant): its wait for the
   * lock goes on whatever the store's `interrupt` says.
   */
  holdsMinted?: boolean | undefined;
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
  /** One profile as list() gives it (no sealed credentials opened), or undefined. Throws `store_malformed`/`store_unreadable`. */
  listOne(name: string): ListedProfile | undefined;
  /**
   * A listed profile's access token by the cheapest way there is: in plain text from the file, or
   * from its copy in the keyring (one keyring read, no cipher: what `token` pays for a fresh token),
   * only when the copy is bound to this profile, its origin and client id. Undefined when there is
   * no such copy (the caller then reads the profile whole). Throws `keyring_unavailable`/`keyring_failed`.
   */
  readAccessToken(name: string, listed: ListedProfile): Promise<string | undefined>;
  /** Asks the keyring once (`mmauth doctor`). Throws `keyring_unavailable`/`keyring_failed`. */
  probeKeyring(): Promise<void>;
  /**
   * Read-modify-write of one profile under an exclusive lock (`config.json.lock`, proper-lockfile),
   * so parallel mmauth processes writing different profiles lose none: `change` gets the current
   * profile (an empty one when there is none) and returns the new one, or undefined to delete it.
   * `change` may be async (a renewal asks the server under the lock, LOCK_HOLD_MAX_MS at most); a
   * throw from it leaves the file untouched. Other profiles are untouched; the file is replaced
   * atomically. Credentials are sealed with a key in the keyring or written in plain text as
   * `MMAUTH_CREDENTIAL_STORE`, `intent` and the profile's record decide (the project's rules; README
   * "Where credentials live"); keys and token copies no profile names any more are removed from
   * the keyring after the write. Throws `store_lock_failed` when the lock cannot be had within LOCK_WAIT_MS,
   * `store_write_failed` when the file cannot be written, `keyring_unavailable`/`keyring_failed`
   * when the credentials must go to a keyring that cannot take them (nothing is written then).
   */
  update(
    name: string,
    change: (current: Profile) => Profile | undefined | Promise<Profile | undefined>,
    intent?: WriteIntent,
  ): Promise<Profile | undefined>;
  /** The config file's current profile (`profile use`), or undefined. Throws what list() throws. */
  currentProfile(): string | undefined;
  /** Sets (or, with undefined, clears) the current profile, under the lock; profiles untouched. */
  setCurrentProfile(name: string | undefined): Promise<void>;
  /**
   * The `.mmauth-profile` files the user approved (attacks N12; direnv's `allow`): absolute path →
   * the content approved (a profile name). A file counts only while its content is the approved one.
   */
  approvedDirectoryFiles(): ReadonlyMap<string, string>;
  /** Records the approval of the directory file at `path` with `content`, under the lock; profiles untouched. */
  approveDirectoryFile(path: string, content: string): Promise<void>;
  /**
   * Renames a profile under the lock: settings, token, refresh token, secret, pending login and the
   * chain move, sealed credentials are re-sealed under the new name (they are bound to it), the
   * token copy is made anew, and the current pointer follows. Throws `profile_exists`, and what
   * update() throws.
   */
  rename(oldName: string, newName: string): Promise<Profile | undefined>;
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
  /**
   * Ends a wait for the lock (`interrupted`): Ctrl-C, SIGTERM, SIGHUP. A wait before anything is
   * sent is always interruptible; a write with `holdsMinted` waits on.
   */
  interrupt?: AbortSignal;
}
