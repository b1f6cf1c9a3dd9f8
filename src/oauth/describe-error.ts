import type * as oauth from 'oauth4webapi';
import { MmauthError, type ErrorCode } from '../errors.js';
import { isRecord } from '../util/is-record.js';

/** The codes of an OAuth error answer, by where it came from. */
export type OAuthErrorCode = Extract<ErrorCode, 'authorization_error' | 'token_endpoint_error' | 'revocation_error'>;

/**
 * The error for an OAuth error answer (RFC 6749 §4.1.2.1, §5.2; RFC 7009 §2.2.1): `endpoint` names
 * where it came from, `error` and `description` are the server's, `status` the HTTP status if any.
 */
export function oauthErrorAnswer(
  code: OAuthErrorCode,
  endpoint: string,
  error: string,
  description: string | undefined,
  status?: number,
): MmauthError {
  const what = `${error}${description ? ` — ${description}` : ''}`;
  const detail =
    status !== undefined && status >= 500
      ? `${endpoint} failed on the server side (HTTP ${status}): ${what}`
      : `${endpoint} refused${status === undefined ? '' : ` (HTTP ${status})`}: ${what}`;
  return new MmauthError(code, detail, { oauthError: error, oauthErrorDescription: description, status });
}

/** An OAuth error as a server reports it: the code and its optional description. */
export interface OAuthErrorFields {
  error: string;
  description: string | undefined;
}

/**
 * `error` and `error_description` of a parsed JSON error body (RFC 6749 §5.2): undefined unless
 * `json` is an object whose `error` is a non-empty string.
 */
export function oauthErrorFields(json: unknown): OAuthErrorFields | undefined {
  if (!isRecord(json) || typeof json.error !== 'string' || json.error === '') return undefined;
  return {
    error: json.error,
    description: typeof json.error_description === 'string' ? json.error_description : undefined,
  };
}

/**
 * `error` and `error_description` of the first WWW-Authenticate challenge that has an `error`
 * (RFC 6750 §3; auth-params as token or quoted-string, RFC 9110 §11.2); undefined when none has.
 */
export function parseChallengeError(header: string | undefined): OAuthErrorFields | undefined {
  if (header === undefined) return undefined;
  const parameter = (name: string) =>
    new RegExp(`(?:^|[\\s,])${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, 'i').exec(header);
  const error = parameter('error');
  if (error === null) return undefined;
  const description = parameter('error_description');
  const unquote = (match: RegExpExecArray) =>
    match[1] === undefined ? (match[2] ?? '') : match[1].replace(/\\(.)/g, '$1');
  return { error: unquote(error), description: description === null ? undefined : unquote(description) };
}

async function readErrorBody(response: Response): Promise<OAuthErrorFields | undefined> {
  try {
    return oauthErrorFields(await response.clone().json());
  } catch {
    // not JSON: fall back to the WWW-Authenticate parameters or the status
    return undefined;
  }
}

/**
 * Maps what an oauth4webapi `process…Response` threw to an MmauthError naming `endpoint`: an OAuth
 * error body or WWW-Authenticate challenge → oauthErrorAnswer(`code`); an unexpected status (3xx,
 * 5xx), a non-JSON or malformed body → `unexpected_status` / `malformed_response`. An MmauthError
 * passes through unchanged.
 */
export async function describeOAuthFailure(
  lib: typeof oauth,
  code: OAuthErrorCode,
  endpoint: string,
  failure: unknown,
): Promise<MmauthError> {
  if (failure instanceof MmauthError) {
    return failure;
  }
  if (failure instanceof lib.ResponseBodyError) {
    // A 404 is the path, whatever its body says (Rails' `{"error": "Not Found"}` is no OAuth error):
    // oauth_error only ever holds the server's OAuth `error` value.
    if (failure.status === 404) return statusError(endpoint, 404);
    return oauthErrorAnswer(code, endpoint, failure.error, failure.error_description, failure.status);
  }
  if (failure instanceof lib.WWWAuthenticateChallengeError) {
    const body = await readErrorBody(failure.response);
    const challenge = failure.cause.find((c) => c.parameters.error !== undefined) ?? failure.cause[0];
    const error = body?.error ?? challenge?.parameters.error;
    if (error !== undefined) {
      const description = body?.description ?? challenge?.parameters.error_description;
      return oauthErrorAnswer(code, endpoint, error, description, failure.status);
    }
    return statusError(endpoint, failure.status);
  }
  if (failure instanceof lib.OperationProcessingError) {
    const response = failure.cause;
    if (
      response instanceof Response &&
      (failure.code === lib.RESPONSE_IS_NOT_CONFORM || response.status < 200 || response.status > 299)
    ) {
      // An error status whose body is not an OAuth error (HTML, text): the status says more.
      return statusError(endpoint, response.status);
    }
    const what = failure.message.replace(/"response" /, '');
    return new MmauthError('malformed_response', `${endpoint} sent a malformed answer: ${what}`, { cause: failure });
  }
  if (failure instanceof lib.UnsupportedOperationError) {
    return new MmauthError(
      'malformed_response',
      `${endpoint} sent an answer mmauth does not support: ${failure.message}`,
      {
        cause: failure,
      },
    );
  }
  const what = failure instanceof Error ? failure.message : String(failure);
  return new MmauthError('unexpected', `${endpoint}: ${what}`, { cause: failure });
}

/** A status that is neither success nor an OAuth error body (5xx, 3xx, an HTML 4xx): `unexpected_status`. */
export function statusError(endpoint: string, status: number): MmauthError {
  let message = `${endpoint} answered HTTP ${status} without an OAuth error body`;
  if (status >= 300 && status < 400) {
    message = `${endpoint} answered with a redirect (HTTP ${status}); mmauth does not follow redirects on OAuth endpoints`;
  } else if (status >= 500) {
    message = `${endpoint} failed on the server side (HTTP ${status})`;
  } else if (status === 407) {
    message = `${endpoint} could not be reached: the proxy asks for authentication (HTTP 407)`;
  } else if (status === 404) {
    message = `${endpoint} does not exist (HTTP 404)`;
  }
  return new MmauthError('unexpected_status', message, { status });
}
