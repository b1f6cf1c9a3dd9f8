import type { CallbackPage } from './pages.js';

/**
 * An authorization response as it arrived (RFC 6749 §4.1.2, §4.2.2): the redirect URI with its
 * query or fragment, from the listener or pasted by the user. The receiver judges it, then answers
 * exactly once: `respond` with the page that says what happened, or `refuse` (not ours; waiting goes on).
 */
export interface IncomingAuthorizationResponse {
  url: URL;
  respond(page: CallbackPage): void;
  refuse(reason: string): void;
}
