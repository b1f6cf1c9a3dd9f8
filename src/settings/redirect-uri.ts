import { MmauthError } from '../errors.js';

/** A fixed loopback redirect URI given with --redirect-uri: where to listen and what to send. */
export interface LoopbackRedirect {
  uri: string;
  port: number;
  path: string;
  /** `localhost` rather than the IP literal: the listener then binds [::1] too. */
  isLocalhost: boolean;
}

/** The redirect path registrations have by default (and mmauth's listener serves without a setting). */
export const DEFAULT_CALLBACK_PATH = '/callback';

/**
 * Checks a callback path (`--callback-path`, a profile's `callback_path`): absolute, visible ASCII,
 * no query, fragment, dot segment or backslash (RFC 8252 §7.3: the path is the client's to choose;
 * a distinct one per server is RFC 9700 §4.4.2's defence against mix-up). Throws `invalid_redirect_uri`.
 */
export function parseCallbackPath(value: string): string {
  const isPlain = /^\/[\x21-\x7e]*$/.test(value) && !/[?#\\]/.test(value) && !/(^|\/)\.{1,2}(\/|$)/.test(value);
  if (!isPlain) {
    throw new MmauthError(
      'invalid_redirect_uri',
      `the callback path "${value}" must start with / and hold no query, fragment, spaces or dot segments`,
      { hint: 'e.g. --callback-path /callback/work' },
    );
  }
  return value;
}

/**
 * Checks a --redirect-uri value: `http://127.0.0.1:PORT/path` or `http://localhost:PORT/path`
 * with an explicit, non-zero port, no query or fragment (RFC 8252 §7.3, §8.3). Throws
 * `invalid_redirect_uri`.
 */
export function parseLoopbackRedirectUri(value: string): LoopbackRedirect {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MmauthError('invalid_redirect_uri', `--redirect-uri "${value}" is not an absolute URL`);
  }
  const isLoopbackName = url.hostname === '127.0.0.1' || url.hostname === 'localhost';
  if (url.protocol === 'https:' && isLoopbackName) {
    const message = `--redirect-uri must be http, got ${value}: the loopback redirect never leaves this machine, and mmauth's listener has no certificate a browser would trust (RFC 8252 §7.3 uses http)`;
    throw new MmauthError('invalid_redirect_uri', message, {
      hint: 'e.g. --redirect-uri http://127.0.0.1:8976/callback',
    });
  }
  if (url.protocol !== 'http:' || !isLoopbackName) {
    const message = `--redirect-uri must be http://127.0.0.1:PORT/path or http://localhost:PORT/path (a loopback listener), got ${value}`;
    throw new MmauthError('invalid_redirect_uri', message);
  }
  if (url.port === '' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    const message = `--redirect-uri needs an explicit port and no query, fragment or credentials, got ${value}`;
    throw new MmauthError('invalid_redirect_uri', message, {
      hint: 'e.g. --redirect-uri http://127.0.0.1:8976/callback',
    });
  }
  // Port 0 would reach the authorization request as it is, and the browser would be sent nowhere.
  if (Number(url.port) === 0) {
    const message = `--redirect-uri needs a port the listener can serve as given (1 to 65535), got ${value}`;
    throw new MmauthError('invalid_redirect_uri', message, {
      hint: 'omit --redirect-uri to let mmauth pick a free port, or give one, e.g. http://127.0.0.1:8976/callback',
    });
  }
  return { uri: url.href, port: Number(url.port), path: url.pathname, isLocalhost: url.hostname === 'localhost' };
}
