import { MmauthError } from '../errors.js';

/** The keyring's service name: every item mmauth keeps there is (service `mmauth`, account = a key id). */
export const KEYRING_SERVICE = 'mmauth';

/** An OS keyring, as the credential vault uses it: small text values under an account name. */
export interface Keyring {
  /** What it is, for people: `Secret Service (D-Bus)`, `macOS Keychain`, `Windows Credential Manager`. */
  readonly name: string;
  /** The value kept for `account`, or undefined when the keyring answers that there is none. */
  get(account: string): Promise<string | undefined>;
  /** Keeps `value` under `account`, replacing what was there. */
  set(account: string, value: string): Promise<void>;
  /** Removes `account`; false when there was nothing to remove. */
  delete(account: string): Promise<boolean>;
}

/**
 * The part of `@napi-rs/keyring` (2.x) mmauth uses: AsyncEntry, whose constructor opens the D-Bus
 * session (synchronously) and whose calls run on libuv's thread pool, so that a read overlaps
 * with loading the cipher.
 */
interface KeyringEntry {
  getPassword(): Promise<string | null>;
  setPassword(password: string): Promise<void>;
  deletePassword(): Promise<boolean>;
}
interface KeyringModule {
  AsyncEntry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: 'secret-service' } },
  ) => KeyringEntry;
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

/**
 * Turns an error of the addon (a plain Error with `code: 'GenericFailure'` and the platform's
 * message) into `keyring_unavailable` (no keyring to use: no bus, no provider, locked) or
 * `keyring_failed` (the keyring answered with an error), naming the keyring and what was being done.
 */
export function describeKeyringError(error: unknown, keyring: string, doing: string): MmauthError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/^Platform failure: /, '').replace(/^DBus error: /, '');
  if (UNAVAILABLE.some((pattern) => pattern.test(message))) {
    return new MmauthError('keyring_unavailable', `no ${keyring} to use (${reason})`, { cause: error });
  }
  return new MmauthError('keyring_failed', `${keyring} failed while ${doing}: ${reason}`, { cause: error });
}

/**
 * Opens the OS keyring through `@napi-rs/keyring` 2.x, loaded here and only here (about 5 ms; the
 * `.node` addon cannot be bundled). On Linux the entry is pinned to Secret Service: the library's
 * default falls back to the kernel keyring silently, which loses keys at reboot. Opening an entry
 * connects and opens an encrypted session (about 5 ms, synchronous); its calls run off the main
 * thread (a D-Bus round trip or two). Errors become
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
  const entry = (account: string, doing: string): KeyringEntry => {
    try {
      return new addon.AsyncEntry(KEYRING_SERVICE, account, { linux: { store: 'secret-service' } });
    } catch (error) {
      throw describeKeyringError(error, name, doing);
    }
  };
  const call = async <T>(account: string, doing: string, act: (entry: KeyringEntry) => Promise<T>): Promise<T> => {
    const item = entry(account, doing);
    try {
      return await act(item);
    } catch (error) {
      throw describeKeyringError(error, name, doing);
    }
  };
  return {
    name,
    get: async (account) => (await call(account, 'reading a key', (item) => item.getPassword())) ?? undefined,
    set: async (account, value) => call(account, 'storing a key', (item) => item.setPassword(value)),
    delete: async (account) => call(account, 'removing a key', (item) => item.deletePassword()),
  };
}
