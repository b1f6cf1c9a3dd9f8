import type * as oauth from 'oauth4webapi';
import { describeOAuthFailure } from './describe-error.js';
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
