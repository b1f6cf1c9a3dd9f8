import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MmauthError } from '../errors.js';
import { isSameSecret } from '../util/constant-time.js';
import type { CallbackPage } from './pages.js';

/** The per-login cookie's name. */
const COOKIE = 'mmauth_login';

/** The page for a callback that did not come from the browser mmauth launched. */
export const NOT_STARTED_HERE: CallbackPage = {
  isSuccess: false,
  title: 'Sign-in not accepted',
  detail:
    "This sign-in was started in the browser mmauth opened, and this request did not come from it. If you signed in elsewhere, paste this page's address into the terminal.",
};

const INTERCEPTED: CallbackPage = {
  isSuccess: false,
  title: 'Sign-in stopped',
  detail:
    'This sign-in was already started once. Another program on this machine may have intercepted it, so mmauth stopped it: nothing was stored.',
};

/** The one-time start address of a login whose browser mmauth launched (see CallbackServer.armStart). */
export interface StartAddress {
  /** Arms it for `authorizationUrl`; returns its path, `/start/<128 random bits>`. */
  arm(authorizationUrl: string): string;
  disarm(): void;
  /** Answers a GET of the start path (true), or leaves the request alone (false). */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    page: (status: number, page: CallbackPage) => void,
  ): boolean;
  /** Whether a callback may be delivered: unarmed, or it carries the login cookie. */
  admits(req: IncomingMessage): boolean;
  /** Set once the start address was requested a second time. */
  readonly intercepted: MmauthError | undefined;
}

/** Whether the request carries the login cookie with `value` (compared in constant time). */
function hasLoginCookie(req: IncomingMessage, value: string): boolean {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE && isSameSecret(rest.join('='), value)) return true;
  }
  return false;
}

/**
 * The start address of the listener serving `callbackPath` (RFC 8252 §8.1 leaves the loopback
 * request open to other local processes; this closes the argv route to it): the first GET
 * redirects to the authorization URL and sets the cookie (HttpOnly, SameSite=Lax, path-limited to
 * the callback); a second GET answers 409 and calls `onIntercepted`.
 */
export function createStartAddress(callbackPath: string, onIntercepted: (error: MmauthError) => void): StartAddress {
  let armed: { path: string; url: string; cookie: string; isUsed: boolean } | undefined;
  let intercepted: MmauthError | undefined;
  return {
    get intercepted() {
      return intercepted;
    },
    arm(authorizationUrl) {
      const path = `/start/${randomBytes(16).toString('hex')}`;
      armed = { path, url: authorizationUrl, cookie: randomBytes(32).toString('base64url'), isUsed: false };
      return path;
    },
    disarm() {
      armed = undefined;
    },
    admits: (req) => armed === undefined || hasLoginCookie(req, armed.cookie),
    serve(req, res, url, page) {
      if (armed === undefined || url.pathname !== armed.path || req.method !== 'GET') return false;
      if (!armed.isUsed) {
        armed.isUsed = true;
        res.writeHead(302, {
          location: armed.url,
          'set-cookie': `${COOKIE}=${armed.cookie}; HttpOnly; SameSite=Lax; Path=${callbackPath}`,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
          connection: 'close',
        });
        res.end();
        return true;
      }
      page(409, INTERCEPTED);
      intercepted ??= new MmauthError(
        'login_intercepted',
        'the sign-in was started twice: another program on this machine may have intercepted it, so the login stopped and nothing was stored',
      );
      onIntercepted(intercepted);
      return true;
    },
  };
}
