import { MmauthError } from '../errors.js';

/** The keyring's service name for keys: (service `mmauth`, account = a key id). */
export const KEYRING_SERVICE = 'mmauth';
/** The service name of access-token copies: told apart from keys by this attribute, never by a name the file gives. */
export const COPY_SERVICE = 'mmauth.access-token';

/** What a keyring item is: a sealing key, or a copy of an access token. */
export type KeyringItemKind = 'key' | 'copy';

/** An OS keyring, as the credential vault uses it: small text values under an account name, of a kind. */
export interface Keyring {
  /** What it is, for people: `Secret Service (D-Bus)`, `macOS Keychain`, `Windows Credential Manager`. */
  readonly name: string;
  /** The value kept for `account` of `kind` (default `key`), or undefined when the keyring answers that there is none. */
  get(account: string, kind?: KeyringItemKind): Promise<string | undefined>;
  /** Keeps `value` under `account` of `kind`, replacing what was there. */
  set(account: string, value: string, kind?: KeyringItemKind): Promise<void>;
  /** Removes `account` of `kind`; false when there was nothing to remove. */
  delete(account: string, kind?: KeyringItemKind): Promise<boolean>;
}

/** The service attribute of an item of `kind`. */
function serviceOf(kind: KeyringItemKind = 'key'): string {
  return kind === 'copy' ? COPY_SERVICE : KEYRING_SERVICE;
}

/**
 * The part of `@napi-rs/keyring` (2.x) mmauth uses. Both constructors open the D-Bus session
 * (synchronously, about 5 ms with its Diffie-Hellman exchange). Reads use Entry: a read is one
 * round trip, and handing it to libuv's thread pool (AsyncEntry) costs a millisecond more than it
 * takes. Writes use AsyncEntry, whose calls run off the main thread: creating an item in a locked
 * keyring may wait on an unlock prompt, and Ctrl-C must still work meanwhile.
 */
interface SyncEntry {
  getPassword(): string | null;
}
interface AsyncEntry {
  setPassword(password: string): Promise<void>;
  deletePassword(): Promise<boolean>;
}
type EntryOptions = { linux?: { store?: 'secret-service' } };
interface KeyringModule {
  Entry: new (service: string, account: string, options?: EntryOptions) => SyncEntry;
  AsyncEntry: new (service: string, account: string, options?: EntryOptions) => AsyncEntry;
}

/** The keyring's name on `platform`. */
export function keyringName(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  return 'Secret Service (D-Bus)';
}

/**
 * Messages of `@napi-rs/keyring` (keyring-rs, dbus-secret-service) that mean "there is no keyring
 * to use here": no session bus, no Secret Service provider on it, or a keyring that is locked and
 * was not unlocked. Anything else is a keyring failure, reported as one, never taken for absence.
 */
const UNAVAILABLE = [
  /DBUS_SESSION_BUS_ADDRESS/i,
  /autolaunch/i,
  /Failed to connect to socket/i,
  /not provided by any \.service files/i,
  /ServiceUnknown/i,
  /No DBus session or Secret Service provider/i,
  /no secret service provider or dbus session/i,
  /prompt was dismissed/i,
  /object locked/i,
  /Couldn't access platform storage/i,
  /No default store/i,
];

/** The reason a keyring cannot be used, in words a person can act on, by what the platform said. */
const REASONS: ReadonlyArray<[RegExp, string]> = [
  [/no result found/i, 'it has no default collection (create one, e.g. "Login", in Seahorse or KWallet)'],
  [/prompt was dismissed|object locked|IsLocked/i, 'it is locked'],
  [/DBUS_SESSION_BUS_ADDRESS|autolaunch|Failed to connect to socket/i, 'no D-Bus session bus'],
  [
    /ServiceUnknown|not provided by any \.service files|Secret Service provider/i,
    'no Secret Service provider on the session bus',
  ],
];

/**
 * Turns an error of the addon (a plain Error with `code: 'GenericFailure'` and the platform's
 * message) into `keyring_unavailable` (no keyring to use: no bus, no provider, locked, no default
 * collection: the message says which, REASONS) or
 * `keyring_failed` (the keyring answered with an error), naming the keyring and what was being done.
 */
export function describeKeyringError(error: unknown, keyring: string, doing: string): MmauthError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/^Platform failure: /, '').replace(/^DBus error: /, '');
  if (UNAVAILABLE.some((pattern) => pattern.test(message))) {
    // A known reason in words; the platform's text only for an unknown one (no D-Bus autolaunch noise).
    const why = REASONS.find(([pattern]) => pattern.test(message))?.[1];
    const said = why === undefined ? `no ${keyring} to use (${reason})` : `no ${keyring} to use: ${why}`;
    return new MmauthError('keyring_unavailable', said, {
      cause: error,
      details: { reason: why ?? reason, platform: reason },
    });
  }
  return new MmauthError('keyring_failed', `${keyring} failed while ${doing}: ${reason}`, { cause: error });
}

/**
 * Opens the OS keyring through `@napi-rs/keyring` 2.x, loaded here and only here (the `.node`
 * addon cannot be bundled; the build loads it from its platform package, about 1 ms). On Linux the entry is pinned to Secret Service: the library's
 * default falls back to the kernel keyring silently, which loses keys at reboot. Errors become
 * `keyring_unavailable` or `keyring_failed` (describeKeyringError); nothing is retried.
 */
export async function openOsKeyring(platform: NodeJS.Platform): Promise<Keyring> {
  const name = keyringName(platform);
  let addon: KeyringModule;
  try {
    addon = (await import('@napi-rs/keyring')) as unknown as KeyringModule;
  } catch (error) {
    throw new MmauthError(
      'keyring_unavailable',
      `no ${name} to use (the keyring addon did not load: ${String(error)})`,
      {
        cause: error,
      },
    );
  }
  const options: EntryOptions = { linux: { store: 'secret-service' } };
  const call = async <T>(doing: string, act: () => T | Promise<T>): Promise<T> => {
    try {
      return await act();
    } catch (error) {
      throw describeKeyringError(error, name, doing);
    }
  };
  return {
    name,
    get: async (account, kind) =>
      (await call('reading an item', () => new addon.Entry(serviceOf(kind), account, options).getPassword())) ??
      undefined,
    set: async (account, value, kind) =>
      call('storing an item', () => new addon.AsyncEntry(serviceOf(kind), account, options).setPassword(value)),
    delete: async (account, kind) =>
      call('removing an item', () => new addon.AsyncEntry(serviceOf(kind), account, options).deletePassword()),
  };
}
