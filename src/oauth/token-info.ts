import { AuthError } from '../errors.js';
import { readJsonBody } from './json-body.js';
import { statusError } from './describe-error.js';
import { parseTokenInfo, type TokenInfo } from './parse.js';
import type { OAuthPeer } from './peer.js';

/** What token info said of a token: alive with its record, or dead (401). */
export type TokenInfoResult = { isActive: true; info: TokenInfo } | { isActive: false };

/**
 * Asks `GET {base}/oauth2/token/info` with `Authorization: Bearer <token>` (spec §4.3; RFC 6750
 * §2.1). 200 → the parsed record (spec or Doorkeeper 5 field names); 401 → `{isActive: false}`
 * (expired, revoked and unknown look the same, server-behaviour.md token info 3). Any other status
 * → ServerError (exit 1); no answer → NetworkError (exit 3). Not in oauth4webapi: Doorkeeper-only.
 */
export async function lookUpTokenInfo(peer: OAuthPeer, accessToken: string): Promise<TokenInfoResult> {
  const answer = await peer.fetch(peer.endpoints.tokenInfo.href, {
    method: 'GET',
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  if (answer.status !== 200) {
    if (answer.status === 401) {
      return { isActive: false };
    }
    throw statusError('the token info endpoint', answer.status);
  }
  return { isActive: true, info: parseTokenInfo(readJsonBody(answer.body, 'the token info endpoint')) };
}

/** lookUpTokenInfo that treats a dead token as an error: AuthError (exit 4). */
export async function requireTokenInfo(peer: OAuthPeer, accessToken: string): Promise<TokenInfo> {
  const result = await lookUpTokenInfo(peer, accessToken);
  if (!result.isActive) {
    throw new AuthError('token is expired, revoked or invalid (token info answered 401)', {
      hint: 'run `mmauth login` (or `mmauth client-credentials`) to get a new token',
      oauthError: 'invalid_token',
    });
  }
  return result.info;
}
