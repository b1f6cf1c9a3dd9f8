import { MmauthError } from '../errors.js';
import { statusError } from './describe-error.js';
import { isJsonContentType, readJsonBody } from './json-body.js';
import { parseTokenInfo, type TokenInfo } from './parse.js';
import type { ServerConfiguration } from './server-configuration.js';

/** What token info said of a token: alive with its record, or dead (401). */
export type TokenInfoResult = { isActive: true; info: TokenInfo } | { isActive: false };

/**
 * Asks `GET {base}/oauth2/token/info` with `Authorization: Bearer <token>` (spec §4.3; RFC 6750
 * §2.1). 200 → the parsed record (spec or Doorkeeper 5 field names); 401 → `{isActive: false}`
 * (expired, revoked and unknown look the same). Any other status → `unexpected_status`. Not in
 * oauth4webapi: this endpoint is Doorkeeper's own.
 */
export async function lookUpTokenInfo(server: ServerConfiguration, accessToken: string): Promise<TokenInfoResult> {
  const response = await server.fetch(server.endpoints.tokenInfo.href, {
    method: 'GET',
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  if (response.status === 401) return { isActive: false };
  if (response.status !== 200) throw statusError('the token info endpoint', response.status);
  const contentType = response.headers['content-type'] ?? '';
  if (!isJsonContentType(contentType)) {
    const what = `its content type is "${contentType}", not application/json`;
    throw new MmauthError('malformed_response', `the token info endpoint sent a malformed answer: ${what}`);
  }
  return { isActive: true, info: parseTokenInfo(readJsonBody(response.body, 'the token info endpoint')) };
}

/** lookUpTokenInfo that treats a dead token as MmauthError `token_inactive` (oauthError invalid_token). */
export async function requireTokenInfo(server: ServerConfiguration, accessToken: string): Promise<TokenInfo> {
  const result = await lookUpTokenInfo(server, accessToken);
  if (!result.isActive) {
    throw new MmauthError('token_inactive', 'token is expired, revoked or invalid (token info answered 401)', {
      oauthError: 'invalid_token',
      status: 401,
    });
  }
  return result.info;
}

/**
 * The resource owner a token acts for (token info, spec §4.3: `resource_owner_id`), or null when
 * token info cannot say (a client-credentials token, a refusal, a failure): never throws.
 */
export async function lookUpResourceOwner(
  server: ServerConfiguration,
  accessToken: string,
): Promise<number | string | null> {
  const result = await lookUpTokenInfo(server, accessToken).catch(() => undefined);
  return result?.isActive === true ? result.info.resourceOwnerId : null;
}
