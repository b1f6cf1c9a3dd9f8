import { MmauthError } from '../errors.js';
import { mayCarryToken, sendWithToken } from '../http/authenticated-request.js';
import { TokenProvider, type Token, type TokenOptions } from './get-token.js';
import { toLibraryError } from './library-errors.js';

/** A profile's tokens for a program that calls the service's API (octokit's `auth.hook`, google-auth-library's client). */
export interface TokenSource {
  /** getToken() of this profile (see `getToken`). */
  getToken(): Promise<Token>;
  /** `{ Authorization: 'Bearer …' }` for the current token (RFC 6750 §2.1). */
  getHeaders(): Promise<{ Authorization: string }>;
  /**
   * `fetch` with the profile's token: a relative path resolves against the profile's base URL; the
   * token goes to that origin only (another origin gets the request without it) and never along a
   * redirect (redirects are not followed: the 3xx comes back). A 401 renews once and replays once
   * when the body can be sent again (none, a string, URLSearchParams, bytes, a Blob); a streamed
   * body is not replayed (the 401 comes back).
   */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
}

/** Whether a request body can be sent twice (a stream cannot). */
function isReplayable(body: RequestInit['body']): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof URLSearchParams ||
    body instanceof Blob ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body)
  );
}

/** `init` with `Authorization: Bearer <token>` (the caller's own Authorization replaced), redirects not followed. */
function withToken(init: RequestInit | undefined, accessToken: string | undefined): RequestInit {
  const headers = new Headers(init?.headers);
  headers.delete('authorization');
  if (accessToken !== undefined) headers.set('authorization', `Bearer ${accessToken}`);
  return { ...init, headers, redirect: 'manual' };
}

/**
 * A token source for one profile (`options` as getToken's): getToken, getHeaders and an
 * authenticated fetch (TokenSource). Errors as getToken's; `fetch` also throws `usage` for a
 * relative path when the profile has no base URL, and what Node's fetch throws for the network.
 */
export function createTokenSource(options: TokenOptions = {}): TokenSource {
  const provider = new TokenProvider(options);
  const source: TokenSource = {
    getToken: () => provider.get(),
    async getHeaders() {
      return { Authorization: `Bearer ${(await provider.get()).accessToken}` };
    },
    async fetch(input, init) {
      const token = await provider.get();
      const baseUrl = await provider.baseUrlOf(token);
      let url: URL;
      try {
        url = new URL(input, baseUrl);
      } catch (error) {
        throw toLibraryError(
          new MmauthError('usage', `cannot resolve ${String(input)}: the profile has no base URL`, { cause: error }),
        );
      }
      // The token goes only to the origin of the profile's base URL (RFC 6749 §10.3).
      if (!mayCarryToken(url, baseUrl)) return fetch(url, withToken(init, undefined));
      let latest = token;
      const tokens = {
        current: () => Promise.resolve(token.accessToken),
        renewAfterRefusal: async () => (latest = await provider.renewAfterRefusal(latest)).accessToken,
      };
      const rule = {
        isRefused: (response: Response) => response.status === 401,
        canReplay: isReplayable(init?.body),
        discard: (response: Response) => response.body?.cancel(),
      };
      const { answer } = await sendWithToken((accessToken) => fetch(url, withToken(init, accessToken)), tokens, rule);
      return answer;
    },
  };
  return source;
}
