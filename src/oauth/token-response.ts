import type * as oauth from 'oauth4webapi';
import { ServerError } from '../errors.js';
import type { HttpAnswer } from '../http/http-client.js';
import { describeOAuthFailure, oauthErrorFields, oauthErrorToCliError, parseChallengeError, statusError, type OAuthErrorFields } from './describe-error.js';
import { readJsonBody } from './json-body.js';
import { parseTokenResponse, type TokenResponse } from './parse.js';

/**
 * Judges a token endpoint answer twice: `process` (an oauth4webapi `process…Response`) checks the
 * status, the OAuth error body, the content type and an ID token if any; parseTokenResponse then
 * checks every field strictly on an untouched copy of the body (spec §2.2, RFC 6749 §5.1/§5.2).
 * Throws the CliError describeOAuthFailure gives, or ServerError for a malformed field.
 */
export async function judgeTokenResponse(
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
    throw await describeOAuthFailure(lib, 'the token endpoint', failure);
  }
  return parseTokenResponse(readJsonBody(new Uint8Array(await untouched.arrayBuffer()), 'the token endpoint'));
}

const ENDPOINT = 'the token endpoint';

/**
 * Judges a token endpoint answer read whole (spec §2.2; RFC 6749 §5.1, §5.2), as
 * oauth4webapi's process functions do, without Fetch API objects: 200 with an application/json
 * body → parseTokenResponse (every field checked; ServerError naming it); an OAuth error body
 * (JSON `error`), or else an `error` in WWW-Authenticate (RFC 6750 §3) → oauthErrorToCliError
 * (invalid_client exit 4, invalid_scope 2, …); any other status → statusError (exit 1; a 3xx
 * is never followed).
 */
export function judgeTokenAnswer(answer: HttpAnswer): TokenResponse {
  if (answer.status === 200) {
    const contentType = answer.headers['content-type'] ?? '';
    if (!/^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(contentType)) {
      throw new ServerError(`${ENDPOINT} sent a malformed answer: its content type is "${contentType}", not application/json${/html/i.test(contentType) ? ' (an HTML page)' : ''}`);
    }
    return parseTokenResponse(readJsonBody(answer.body, ENDPOINT));
  }
  if (answer.status >= 400) {
    const failure = oauthErrorBody(answer.body) ?? parseChallengeError(answer.headers['www-authenticate']);
    if (failure !== undefined) {
      throw oauthErrorToCliError(ENDPOINT, failure.error, failure.description, answer.status);
    }
  }
  throw statusError(ENDPOINT, answer.status);
}

/** The OAuth error of a strict UTF-8 JSON error body (RFC 6749 §5.2); undefined for anything else. */
function oauthErrorBody(body: Uint8Array): OAuthErrorFields | undefined {
  try {
    return oauthErrorFields(readJsonBody(body, ENDPOINT));
  } catch {
    return undefined;
  }
}
