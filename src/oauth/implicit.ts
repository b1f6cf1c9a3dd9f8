import { timingSafeEqual } from 'node:crypto';
import { ServerError } from '../errors.js';
import { ForeignCallbackError } from './authorization-code.js';
import { oauthErrorToCliError } from './describe-error.js';
import type { Endpoints } from './endpoints.js';
import { parseTokenResponse, type TokenResponse } from './parse.js';

/** Where the implicit flow's answer is read from, for messages. */
const SOURCE = 'the implicit redirect';

/**
 * The parameters of an implicit-flow redirect (RFC 6749 §4.2.2): the fragment, which the server
 * put there and the user agent relayed; the query when the fragment is empty (some servers put
 * errors there).
 */
export function implicitParameters(url: URL): URLSearchParams {
  return new URLSearchParams(url.hash.length > 1 ? url.hash.slice(1) : url.search);
}

/**
 * Validates an implicit-flow redirect (spec §2.3, §4.1; RFC 6749 §4.2.2, §4.2.2.1; RFC 9207): an
 * `iss` naming another server, or a missing or wrong `state`, throws ForeignCallbackError (the
 * redirect is not ours; waiting goes on); `error` throws what oauthErrorToCliError makes of it
 * (access_denied: AuthError, exit 4); otherwise `access_token`, `token_type` (bearer, any case)
 * and an optional whole-second `expires_in` are returned as a TokenResponse (ServerError, exit 1,
 * for a malformed one). The state is compared in constant time.
 */
export function parseImplicitCallback(endpoints: Endpoints, parameters: URLSearchParams, expectedState: string): TokenResponse {
  const issuer = parameters.get('iss');
  if (issuer !== null && issuer !== endpoints.baseUrl) {
    throw new ForeignCallbackError(`callback rejected: "iss" is ${issuer}, expected ${endpoints.baseUrl}`, { hint: 'this redirect does not belong to the login in progress' });
  }
  const state = parameters.get('state');
  if (state === null || !isSameText(state, expectedState)) {
    throw new ForeignCallbackError(`callback rejected: ${state === null ? 'missing "state"' : 'unexpected "state" value'}`, {
      hint: 'this redirect does not belong to the login in progress',
    });
  }
  const error = parameters.get('error');
  if (error !== null) {
    throw oauthErrorToCliError('the authorization server', error, parameters.get('error_description') ?? undefined);
  }
  if (parameters.get('code') !== null && parameters.get('access_token') === null) {
    throw new ServerError(`${SOURCE} carried an authorization code instead of a token: the server ignored response_type=token`);
  }
  const expiresIn = parameters.get('expires_in');
  if (expiresIn !== null && !/^\d{1,10}$/.test(expiresIn)) {
    throw new ServerError(`${SOURCE} sent a malformed answer: "expires_in" must be a whole number of seconds, got ${JSON.stringify(expiresIn)}`);
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

function isSameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
