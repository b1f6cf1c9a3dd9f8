import { describe, expect, it } from 'vitest';
import { describeKeyringError } from '../../../src/store/keyring.js';

/** What @napi-rs/keyring 2.1.2 throws on Linux, as measured on this machine (a plain Error, code GenericFailure). */
const failure = (message: string) => Object.assign(new Error(message), { code: 'GenericFailure' });

describe('describeKeyringError', () => {
  it.each([
    [
      'Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead',
      'no D-Bus session bus',
    ],
    [
      'Platform failure: DBus error: Failed to connect to socket /tmp/x/bus: No such file or directory',
      'no D-Bus session bus',
    ],
    [
      'Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files',
      'no Secret Service provider on the session bus',
    ],
    ["Couldn't access platform storage: Secret Service: unlock prompt was dismissed", 'it is locked'],
    ["Couldn't access platform storage: Secret Service: no result found", 'it has no default collection'],
  ])('no keyring to use, the reason in words, no platform noise: %s', (message, reason) => {
    const error = describeKeyringError(failure(message), 'Secret Service (D-Bus)', 'reading a key');
    expect(error.code).toBe('keyring_unavailable');
    expect(error.message).toMatch(new RegExp(`^no Secret Service \\(D-Bus\\) to use: ${reason}`));
    expect(error.message).not.toMatch(/Platform failure|DBus error|autolaunch|Couldn't access/);
  });

  it.each([
    'Platform failure: DBus error: refused by the provider (Service.OpenSession)',
    'Attribute too long',
    'Platform failure: message decryption failed',
  ])('anything else is a keyring failure, never taken for "no keyring": %s', (message) => {
    const error = describeKeyringError(failure(message), 'Secret Service (D-Bus)', 'storing a key');
    expect(error.code).toBe('keyring_failed');
    expect(error.message).toMatch(/^Secret Service \(D-Bus\) failed while storing a key: /);
  });
});
