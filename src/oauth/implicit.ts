import { MmauthError } from '../errors.js';
import { isSameSecret } from '../util/constant-time.js';
import { oauthErrorAnswer } from './describe-error.js';
import type { Endpoints } from './endpoints.js';
import { parseTokenResponse, type TokenResponse } from './parse.js';
import { checkIssuer } from './issuer-check.js';

/** Where the implicit flow's answer is read from, for messages. */
const SOURCE = 'the implicit redirect';

/**
 * The parameters of an implicit-flow authorization response (RFC 6749 §4.2.2): the fragment the
 * user agent relayed; the query when the fragment is empty (some servers put errors there).
 */
export function implicitParameters(url: URL): URLSearchParams {
  return new URLSearchParams(url.hash.length > 1 ? url.hash.slice(1) : url.search);
}

/**
 * Validates an implicit-flow authorization response (RFC 6749 §4.2.2, §4.2.2.1; RFC 9207; spec
 * §2.3): a missing or wrong `state` (compared in constant time, first) or then a foreign `iss`
 * throws `state_mismatch`, echoing no parameter; `error` throws `authorization_error`; otherwise `access_token`, `token_type`
 * (bearer, any case) and an optional whole-second `expires_in` are returned as a TokenResponse
 * (`malformed_response` for a bad field).
 */
export function parseImplicitAuthorizationResponse(
  endpoints: Endpoints,
  parameters: URLSearchParams,
  expectedState: string,
): TokenResponse {
  // `state` first: until it matches, the request is anyone's, and nothing of it is echoed.
  const state = parameters.get('state');
  if (state === null || !isSameSecret(state, expectedState)) {
    const what = state === null ? 'missing "state"' : 'unexpected "state" value';
    throw new MmauthError('state_mismatch', `callback rejected: ${what}`);
  }
  // A server whose metadata names its issuer: RFC 9207 §2.4 (iss_missing, iss_mismatch); else a foreign `iss` as before.
  if (endpoints.issuer !== undefined) checkIssuer(endpoints, parameters, expectedState);
  const issuer = parameters.get('iss');
  if (issuer !== null && issuer !== endpoints.baseUrl && endpoints.issuer === undefined) {
    throw new MmauthError(
      'state_mismatch',
      `callback rejected: "iss" names another server, expected ${endpoints.baseUrl}`,
    );
  }
  const error = parameters.get('error');
  if (error !== null) {
    throw oauthErrorAnswer(
      'authorization_error',
      'the authorization server',
      error,
      parameters.get('error_description') ?? undefined,
    );
  }
  if (parameters.get('code') !== null && parameters.get('access_token') === null) {
    const what = 'carried an authorization code instead of a token: the server ignored response_type=token';
    throw new MmauthError('malformed_response', `${SOURCE} ${what}`);
  }
  const expiresIn = parameters.get('expires_in');
  if (expiresIn !== null && !/^\d{1,10}$/.test(expiresIn)) {
    const what = `"expires_in" must be a whole number of seconds, got ${JSON.stringify(expiresIn)}`;
    throw new MmauthError('malformed_response', `${SOURCE} sent a malformed answer: ${what}`);
  }
  return parseTokenResponse(
    {
      access_token: parameters.get('access_token') ?? undefined,
      token_type: parameters.get('token_type') ?? undefined,
      expires_in: expiresIn === null ? undefined : Number(expiresIn),
      scope: parameters.get('scope') ?? undefined,
    },
    SOURCE,
  );
}
