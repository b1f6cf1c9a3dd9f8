import { MmauthError } from '../errors.js';
import type { IncomingAuthorizationResponse } from '../loopback/authorization-response.js';
import type { CallbackServer } from '../loopback/callback-server.js';
import { deadlineSignal } from '../util/deadline.js';

/** Options of waitForAuthorizationResponses. */
export interface ResponseWaitOptions {
  listener: CallbackServer;
  /** The redirect URI sent in the authorization request; a pasted URL must have its path. */
  redirectUri: string;
  /** Lines pasted on stdin (paste-back, when the browser cannot reach 127.0.0.1). */
  pasted: AsyncIterable<string> | undefined;
  /** The whole wait's bound (`--wait`), in ms. */
  timeoutMs: number;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** Told why a response or pasted line was not taken, while waiting goes on. */
  onRefused(reason: string): void;
}

/** Authorization responses from the listener and from paste-back, one at a time. */
export interface AuthorizationResponses {
  /**
   * The next response from either source. Rejects with `callback_timeout` once the wait's bound
   * has passed, `interrupted` on Ctrl-C.
   */
  next(): Promise<IncomingAuthorizationResponse>;
}

/**
 * Merges the loopback listener's authorization responses with pasted redirect URLs (RFC 8252
 * §7.3; paste-back for a browser on another machine). A pasted line that is no URL, or not at the
 * redirect URI's path, is refused at once; a pasted URL's `respond` and `refuse` do nothing (there is no
 * browser to show a page to).
 */
export function waitForAuthorizationResponses(options: ResponseWaitOptions): AuthorizationResponses {
  // Held by the timer list: an AbortSignal.timeout inside AbortSignal.any can be collected unfired.
  const deadline = deadlineSignal(options.timeoutMs, [options.signal]).signal;
  const pastedLines = options.pasted?.[Symbol.asyncIterator]();
  let fromListener: Promise<IncomingAuthorizationResponse> | undefined;
  let fromPaste: Promise<IncomingAuthorizationResponse | undefined> | undefined;

  const nextPasted = async (): Promise<IncomingAuthorizationResponse | undefined> => {
    for (;;) {
      const line = await pastedLines?.next();
      if (line === undefined || line.done === true) return undefined;
      const url = parsePastedUrl(line.value, options.redirectUri);
      if (typeof url === 'string') {
        if (url !== '') options.onRefused(url);
        continue;
      }
      // Nothing to answer: the caller reports a refusal itself.
      return { url, respond: () => undefined, refuse: () => undefined };
    }
  };

  return {
    async next() {
      fromListener ??= options.listener.next(deadline);
      fromPaste ??= nextPasted();
      const ended = new Promise<never>((_, reject) => {
        const fail = () => reject(endOfWait(options, deadline.reason));
        if (deadline.aborted) fail();
        deadline.addEventListener('abort', fail, { once: true });
      });
      ended.catch(() => undefined);
      const winner = await Promise.race([
        fromListener.then((response) => ({ response, isPasted: false })),
        fromPaste.then((response) => ({ response, isPasted: true })),
        ended,
      ]).catch((error: unknown) => {
        throw deadline.aborted ? endOfWait(options, deadline.reason) : error;
      });
      if (winner.isPasted) {
        fromPaste = undefined;
        // Stdin ended without a usable paste: keep waiting for the listener alone.
        if (winner.response === undefined) {
          fromPaste = new Promise(() => undefined);
          return this.next();
        }
      } else {
        fromListener = undefined;
      }
      return winner.response as IncomingAuthorizationResponse;
    },
  };
}

/** The error that ends the wait: Ctrl-C, or the bound passed. */
function endOfWait(options: ResponseWaitOptions, reason: unknown): MmauthError {
  if (options.signal.aborted || !(reason instanceof DOMException && reason.name === 'TimeoutError')) {
    return new MmauthError('interrupted', 'interrupted while waiting for the browser');
  }
  const seconds = Math.round(options.timeoutMs / 1000);
  if (options.listener.refusedWithoutCookie > 0) {
    return new MmauthError(
      'callback_timeout',
      `a redirect arrived at ${options.redirectUri} but was refused: it did not carry the login's cookie, set when the browser opened the start address (a BROWSER command that keeps no cookies)`,
      { details: { cookie: 'missing' } },
    );
  }
  return new MmauthError('callback_timeout', `no redirect arrived at ${options.redirectUri} within ${seconds} s`);
}

/** A pasted line as a URL at the redirect URI's path, or why not ('' for a blank line). */
function parsePastedUrl(line: string, redirectUri: string): URL | string {
  const text = line.trim();
  if (text === '') return '';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'what was pasted is not a URL; paste the full address the browser ended on';
  }
  const expected = new URL(redirectUri);
  if (url.pathname !== expected.pathname || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return `the pasted URL is not the redirect URI (expected ${expected.origin}${expected.pathname}?…)`;
  }
  return url;
}
