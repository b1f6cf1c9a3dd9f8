import { fileSignature } from '../util/file-signature.js';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { bindingOf, isSameBinding, type CredentialBinding } from '../store/secrets.js';
import { markFollower } from '../store/token-followers.js';

/** How often the config file is stat'ed when no change event came, in ms: the longest a missed event delays a switch. */
export const FOLLOW_POLL_MS = 100;

/** What the profile holds now, as exec follows it. */
export type FollowedState =
  | { kind: 'token'; token: StoredToken }
  | { kind: 'no_token' }
  /** Removed, renamed away, or pointed at another origin or client (attacks N11): not this grant any more. */
  | { kind: 'rebound' };

/** Watches one profile in the config file for another process's renewal, logout or rename. */
export interface ProfileFollower {
  /** Whether the file changed since the last look (one `stat`: ino, size, mtime). */
  hasChanged(): boolean;
  /** Sets the listener called when the watch or the poll sees the file change. */
  onChange(listener: () => void): void;
  /** The profile's token as stored now (the keyring copy or the plain field; the sealed form only when neither). */
  read(): Promise<FollowedState>;
  close(): void;
}

/**
 * Follows profile `profileName` of `store` for an `exec` run (the project's rules: exec follows the store,
 * not only its timer): the `onChange` listener is called when the config file changes (inotify through fs.watch
 * on its directory, since writes replace the file by rename, and a stat every FOLLOW_POLL_MS as a
 * fallback), at most once per change. The profile is bound to the origin and client id it had at
 * start (`binding`); read() reports `rebound` when they change. Timers are unref'd. Never throws
 * from the watch; read() throws what the store throws.
 */
export function followProfile(store: ProfileStore, profileName: string, binding: CredentialBinding): ProfileFollower {
  let onChange = () => undefined as void;
  const path = store.path;
  let seen = fileSignature(path);
  const hasChanged = () => {
    const now = fileSignature(path);
    if (now === seen) return false;
    seen = now;
    return true;
  };
  const poke = () => {
    if (hasChanged()) onChange();
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
      if (name === null || name === basename(path)) poke();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    // No inotify here (or no directory yet): the poll alone.
  }
  const poll = setInterval(poke, FOLLOW_POLL_MS);
  poll.unref();
  // Renewals by any process now wait HAND_OVER_MS before the first presentation, for this switch.
  const unmark = markFollower(path, profileName);
  return {
    hasChanged,
    onChange(listener) {
      onChange = listener;
    },
    async read() {
      const listed = store.listOne(profileName);
      if (listed === undefined) return { kind: 'rebound' };
      if (!isSameBinding(bindingOf(profileName, listed.baseUrl, listed.clientId), binding)) return { kind: 'rebound' };
      const token = listed.token;
      if (token === undefined) return { kind: 'no_token' };
      const fields = {
        tokenType: token.tokenType,
        scope: token.scope,
        grant: token.grant,
        obtainedAt: token.obtainedAt,
        expiresAt: token.expiresAt,
      };
      const copy = await store.readAccessToken(profileName, listed);
      if (copy !== undefined) return { kind: 'token', token: { ...fields, accessToken: copy } };
      const opened = (await store.read(profileName))?.token;
      return opened === undefined ? { kind: 'no_token' } : { kind: 'token', token: opened };
    },
    close() {
      clearInterval(poll);
      watcher?.close();
      unmark();
    },
  };
}
