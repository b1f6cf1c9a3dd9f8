import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthErrorWire } from '../oauth/wire.js';
import type { BrowserSession } from './state.js';

/** The emulator's browser session cookie. */
export const SESSION_COOKIE = '_mmauth_emulator_session';

/** Doorkeeper's error descriptions (its locale file), by OAuth error code. */
export const DESCRIPTIONS: Readonly<Record<string, string>> = {
  invalid_client:
    'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  invalid_request:
    'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_redirect_uri: "The requested redirect uri is malformed or doesn't match client redirect URI.",
  unsupported_response_type: 'The authorization server does not support this response type.',
  unsupported_response_mode: 'The authorization server does not support this response mode.',
  invalid_code_challenge_method: 'The code challenge method must be plain or S256.',
  access_denied: 'The resource owner or authorization server denied the request.',
  invalid_token: 'The access token is invalid',
  unauthorized_client: 'You are not authorized to revoke this token',
};

/** The value of cookie `name` in the request, if any. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

function sessionCookie(session: BrowserSession | undefined): Record<string, string> {
  return session === undefined
    ? {}
    : { 'set-cookie': `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax` };
}

/** An HTML page, never framed, with the session cookie when given. */
export function sendPage(res: ServerResponse, status: number, html: string, session?: BrowserSession): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    ...sessionCookie(session),
  });
  res.end(html);
}

/** A 302 to `location`, with the session cookie when given. */
export function sendRedirect(res: ServerResponse, location: string, session?: BrowserSession): void {
  res.writeHead(302, { location, 'cache-control': 'no-store', ...sessionCookie(session) });
  res.end();
}

/** A JSON answer, never cached (RFC 6749 §5.1). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: object,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/** An OAuth error answer with Doorkeeper's WWW-Authenticate header (as servers of the family do). */
export function sendOAuthError(
  res: ServerResponse,
  status: number,
  error: string,
  extra: Partial<OAuthErrorWire> = {},
): void {
  const description = DESCRIPTIONS[error] ?? error;
  const body: OAuthErrorWire = { error, error_description: description, ...extra };
  sendJson(res, status, body, {
    'www-authenticate': `Bearer realm="Doorkeeper", error="${error}", error_description="${description.replace(/"/g, "'")}"`,
  });
}

/** Doorkeeper's 404: an empty HTML body. */
export function sendNotFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
  res.end();
}
