import type { ClientOptions } from '../../settings/setting-options.js';
import type { StorageOptions } from '../../signin/credential-storage.js';

/** The warning every implicit-flow login prints, one step or two. */
export const IMPLICIT_DEPRECATED =
  "the implicit flow is deprecated (RFC 9700 §2.1.2: the token travels in the browser's URL); prefer `mmauth login` without --implicit";

/** Options of `mmauth login`. */
export interface LoginOptions extends ClientOptions, StorageOptions {
  scope?: string;
  redirectUri?: string;
  /** --callback-path: the loopback redirect URI's path (default: the profile's, else /callback). */
  callbackPath?: string;
  /** Seconds to wait for the redirect. */
  wait: number;
  /** false with --no-browser. */
  browser: boolean;
  /** The implicit flow instead of the code flow. */
  implicit?: boolean;
  /** Store a personal access token read from stdin. */
  withToken?: boolean;
  /** false with --no-verify: store a --with-token token without asking token info. */
  verify: boolean;
  /** Replace the profile's token although it is a client token or belongs to another server. */
  replace?: boolean;
  /** false with --no-probe: do not ask the authorization endpoint before waiting. */
  probe: boolean;
  /** Sign in on another device (RFC 8628 device authorization grant). */
  device?: boolean;
  /** With the device grant: draw the verification address as a QR code in the terminal. */
  qr?: boolean;
  /** The server's device authorization endpoint where its metadata names none; kept in the profile. */
  deviceAuthorizationUrl?: string;
  /** Keep the browser address to paste back where no browser can open, even where the device grant is offered. */
  paste?: boolean;
  /** Two-step login, step one: store the request, print the URL, do not listen. */
  start?: boolean;
  /** Two-step login, step two: the redirect URL the browser ended on, or `-` for stdin; `true` (no value) after `--device --start`. */
  complete?: string | true;
}
