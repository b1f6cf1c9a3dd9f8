import type * as oauth from 'oauth4webapi';
import { AuthError, CliError, ServerError, UsageError } from '../errors.js';
import { isRecord } from '../is-record.js';

/** RFC 6749 §5.2 / RFC 6750 §3.1 / RFC 7009 §2.2.1 error codes that mean "you are not allowed": exit 4. */
const AUTH_ERRORS = new Set(['invalid_client', 'invalid_grant', 'unauthorized_client', 'access_denied', 'invalid_token']);

const HINTS: Record<string, string> = {
  invalid_client: 'check the client id and secret (--client-id / MMAUTH_CLIENT_ID; MMAUTH_CLIENT_SECRET, --client-secret-file or --client-secret-stdin)',
  invalid_grant: 'the authorization code was refused (expired, used, or issued for another redirect URI): run `mmauth login` again',
  invalid_scope: 'pass --scope with scopes the server knows (space-separated)',
  unauthorized_client: 'this client may not do that; check --client-id and the client secret',
  access_denied: 'the request was denied; run `mmauth login` again and allow access',
};

/**
 * The CliError for an OAuth error code (RFC 6749 §5.2): invalid_client, invalid_grant,
 * unauthorized_client, access_denied and invalid_token exit 4; invalid_scope exits 2 (bad input);
 * any other code exits 1. `endpoint` names where it came from.
 */
export function oauthErrorToCliError(endpoint: string, error: string, description: string | undefined, status?: number): CliError {
  const detail = `${endpoint} refused${status === undefined ? '' : ` (HTTP ${status})`}: ${error}${description ? ` — ${description}` : ''}`;
  const hint = HINTS[error];
  const options = hint === undefined ? {} : { hint };
  if (AUTH_ERRORS.has(error)) {
    return new AuthError(detail, { ...options, oauthError: error });
  }
  if (error === 'invalid_scope') {
    return new UsageError(detail, options);
  }
  return new ServerError(detail, options);
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
  return { error: json.error, description: typeof json.error_description === 'string' ? json.error_description : undefined };
}

/**
 * `error` and `error_description` of the first WWW-Authenticate challenge that has an `error`
 * (RFC 6750 §3; auth-params as token or quoted-string, RFC 9110 §11.2); undefined when none has.
 */
export function parseChallengeError(header: string | undefined): OAuthErrorFields | undefined {
  if (header === undefined) return undefined;
  const parameter = (name: string) => new RegExp(`(?:^|[\\s,])${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, 'i').exec(header);
  const error = parameter('error');
  if (error === null) return undefined;
  const description = parameter('error_description');
  const unquote = (match: RegExpExecArray) => (match[1] === undefined ? (match[2] ?? '') : match[1].replace(/\\(.)/g, '$1'));
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
 * Maps what an oauth4webapi `process…Response` threw to a CliError naming `endpoint`: an OAuth
 * error body or WWW-Authenticate challenge → oauthErrorToCliError; an unexpected status (3xx, 5xx),
 * a non-JSON or malformed body → ServerError (exit 1). A CliError passes through unchanged.
 */
export async function describeOAuthFailure(lib: typeof oauth, endpoint: string, failure: unknown): Promise<CliError> {
  if (failure instanceof CliError) {
    return failure;
  }
  if (failure instanceof lib.ResponseBodyError) {
    return oauthErrorToCliError(endpoint, failure.error, failure.error_description, failure.status);
  }
  if (failure instanceof lib.WWWAuthenticateChallengeError) {
    const body = await readErrorBody(failure.response);
    const challenge = failure.cause.find((c) => c.parameters.error !== undefined) ?? failure.cause[0];
    const error = body?.error ?? challenge?.parameters.error;
    if (error !== undefined) {
      return oauthErrorToCliError(endpoint, error, body?.description ?? challenge?.parameters.error_description, failure.status);
    }
    return statusError(endpoint, failure.status);
  }
  if (failure instanceof lib.OperationProcessingError) {
    if (failure.cause instanceof Response && (failure.code === lib.RESPONSE_IS_NOT_CONFORM || failure.cause.status < 200 || failure.cause.status > 299)) {
      // An error status whose body is not an OAuth error (HTML, text): the status says more.
      return statusError(endpoint, failure.cause.status);
    }
    return new ServerError(`${endpoint} sent a malformed answer: ${failure.message.replace(/"response" /, '')}`, { cause: failure });
  }
  if (failure instanceof lib.UnsupportedOperationError) {
    return new ServerError(`${endpoint} sent an answer mmauth does not support: ${failure.message}`, { cause: failure });
  }
  return new ServerError(`${endpoint}: ${failure instanceof Error ? failure.message : String(failure)}`, { cause: failure });
}

/** An HTTP status that is neither success nor an OAuth error body; `status` is the HTTP status. */
export class UnexpectedStatusError extends ServerError {
  readonly status: number;

  constructor(message: string, status: number, options: { hint?: string } = {}) {
    super(message, options);
    this.status = status;
  }
}

/** A status that is neither success nor an OAuth error body: 5xx, 3xx, an HTML 4xx. Exit 1. */
export function statusError(endpoint: string, status: number): UnexpectedStatusError {
  if (status >= 300 && status < 400) {
    return new UnexpectedStatusError(`${endpoint} answered with a redirect (HTTP ${status}); mmauth does not follow redirects on OAuth endpoints`, status, {
      hint: 'check --base-url: it must be the server\'s own address',
    });
  }
  if (status >= 500) {
    return new UnexpectedStatusError(`${endpoint} failed on the server side (HTTP ${status})`, status, { hint: 'try again later' });
  }
  if (status === 404) {
    return new UnexpectedStatusError(`${endpoint} does not exist (HTTP 404)`, status, { hint: 'check --base-url: the endpoints are under {base}/oauth2/' });
  }
  return new UnexpectedStatusError(`${endpoint} answered HTTP ${status} without an OAuth error body`, status);
}
