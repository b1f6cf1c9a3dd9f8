import type * as oauth from 'oauth4webapi';
import { MmauthError } from '../errors.js';
import type { HttpResponse } from '../http/http-types.js';
import {
  describeOAuthFailure,
  oauthErrorAnswer,
  oauthErrorFields,
  parseChallengeError,
  statusError,
  type OAuthErrorFields,
} from './describe-error.js';
import { isJsonContentType, readJsonBody } from './json-body.js';
import { parseTokenResponse, type TokenResponse } from './parse.js';

const ENDPOINT = 'the token endpoint';

/**
 * Validates a token endpoint response (Fetch `Response`) twice: `process` (an oauth4webapi
 * `process…Response`) checks the status, the OAuth error body and the content type;
 * parseTokenResponse then checks every field strictly on an untouched copy of the body (spec §2.2,
 * RFC 6749 §5.1/§5.2). Throws what describeOAuthFailure gives (`token_endpoint_error`, …).
 */
export async function validateTokenEndpointResponse(
  lib: typeof oauth,
  response: Response,
  process: (response: Response) => Promise<unknown>,
): Promise<TokenResponse> {
  const untouched = response.clone();
  try {
    await process(response);
  } catch (failure) {
    // Not awaited: cancelling one branch of a tee'd body settles only when the other is done too.
    untouched.body?.cancel().catch(() => undefined);
    throw await describeOAuthFailure(lib, 'token_endpoint_error', ENDPOINT, failure);
  }
  return parseTokenResponse(readJsonBody(new Uint8Array(await untouched.arrayBuffer()), ENDPOINT));
}

/**
 * Parses a token endpoint response read whole (spec §2.2; RFC 6749 §5.1, §5.2) as oauth4webapi's
 * process functions do, without Fetch API objects: 200 with an application/json body →
 * parseTokenResponse; an OAuth error body (JSON `error`), else an `error` in WWW-Authenticate
 * (RFC 6750 §3) → `token_endpoint_error`; a 404 or any other status → `unexpected_status` (a 3xx
 * is never followed); a 200 that is not JSON → `malformed_response`.
 */
export function parseTokenEndpointResponse(response: HttpResponse): TokenResponse {
  if (response.status === 200) {
    const contentType = response.headers['content-type'] ?? '';
    if (!isJsonContentType(contentType)) {
      const what = `its content type is "${contentType}", not application/json${/html/i.test(contentType) ? ' (an HTML page)' : ''}`;
      throw new MmauthError('malformed_response', `${ENDPOINT} sent a malformed answer: ${what}`);
    }
    return parseTokenResponse(readJsonBody(response.body, ENDPOINT));
  }
  // A 404 is the path, whatever its body says (Rails' `{"error": "Not Found"}` is no OAuth error).
  if (response.status >= 400 && response.status !== 404) {
    const failure = oauthErrorBody(response.body) ?? parseChallengeError(response.headers['www-authenticate']);
    if (failure !== undefined) {
      throw oauthErrorAnswer('token_endpoint_error', ENDPOINT, failure.error, failure.description, response.status);
    }
  }
  throw statusError(ENDPOINT, response.status);
}

/** The OAuth error of a strict UTF-8 JSON error body (RFC 6749 §5.2); undefined for anything else. */
function oauthErrorBody(body: Uint8Array): OAuthErrorFields | undefined {
  try {
    return oauthErrorFields(readJsonBody(body, ENDPOINT));
  } catch {
    return undefined;
  }
}
