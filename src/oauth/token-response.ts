import type * as oauth from 'oauth4webapi';
import { ServerError } from '../errors.js';
import type { HttpAnswer } from '../http/http-client.js';
import { isRecord } from '../is-record.js';
import { describeOAuthFailure, oauthErrorToCliError, statusError } from './describe-error.js';
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

/** `error` and `error_description` of the first challenge that has them (RFC 6750 §3, RFC 9110 §11.6.1). */
export function parseChallengeError(header: string | undefined): { error: string; description: string | undefined } | undefined {
  if (header === undefined) return undefined;
  const parameter = (name: string) => new RegExp(`(?:^|[\\s,])${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, 'i').exec(header);
  const error = parameter('error');
  if (error === null) return undefined;
  const description = parameter('error_description');
  const unquote = (match: RegExpExecArray) => match[1] === undefined ? (match[2] ?? '') : match[1].replace(/\\(.)/g, '$1');
  return { error: unquote(error), description: description === null ? undefined : unquote(description) };
}

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

/** The `error` and `error_description` of a JSON error body (RFC 6749 §5.2); undefined for anything else. */
function oauthErrorBody(body: Uint8Array): { error: string; description: string | undefined } | undefined {
  let json: unknown;
  try {
    json = readJsonBody(body, ENDPOINT);
  } catch {
    return undefined;
  }
  if (!isRecord(json) || typeof json.error !== 'string' || json.error === '') return undefined;
  return { error: json.error, description: typeof json.error_description === 'string' ? json.error_description : undefined };
}
