import type { ServerResponse } from 'node:http';
import { checkAuthorizationRequest, requestFields, type AuthorizationRequest } from '../authorization-request.js';
import { renderAuthorizeErrorPage, renderConsentPage, renderLoginPage } from '../pages.js';
import { redirectTo } from '../redirect-uri.js';
import { DESCRIPTIONS, readCookie, sendPage, sendRedirect, SESSION_COOKIE } from '../responses.js';
import { lifetimeS, randomToken, type BrowserSession, type EmulatorState } from '../state.js';
import { isVisibleWord } from '../../util/visible-word.js';
import type { EndpointHandler } from './context.js';

/** A fresh CSRF token for one form of `session`; the session keeps the 20 newest. */
function issueCsrf(session: BrowserSession): string {
  const token = randomToken();
  session.csrfTokens.add(token);
  while (session.csrfTokens.size > 20) {
    const oldest = session.csrfTokens.values().next().value;
    if (oldest === undefined) break;
    session.csrfTokens.delete(oldest);
  }
  return token;
}

/** Approval: a code in the query (RFC 6749 §4.1.2) or a token in the fragment (§4.2.2). */
function approve(
  res: ServerResponse,
  state: EmulatorState,
  request: AuthorizationRequest,
  ownerId: number,
  iss: string | undefined,
  session?: BrowserSession,
): void {
  if (request.responseType === 'token') {
    const token = state.issueToken({ client: request.client, ownerId, scopes: request.scopes, grant: 'implicit' });
    const expiresIn = lifetimeS(token);
    const params = {
      access_token: token.token,
      token_type: 'Bearer',
      expires_in: expiresIn === undefined ? undefined : String(expiresIn),
      state: request.state,
      iss,
    };
    sendRedirect(res, redirectTo(request.redirectUri, params, true), session);
    return;
  }
  const { client, redirectUri, scopes, challenge } = request;
  const code = state.issueCode({ client, ownerId, redirectUri, scopes, challenge });
  sendRedirect(res, redirectTo(redirectUri, { code: code.code, state: request.state, iss }, false), session);
}

function sendRequestError(
  res: ServerResponse,
  error: string,
  description: string | undefined,
  session?: BrowserSession,
): void {
  sendPage(res, 200, renderAuthorizeErrorPage(error, description ?? DESCRIPTIONS[error] ?? error), session);
}

/**
 * `GET /oauth2/authorize` (RFC 6749 §4.1.1; spec §4.1): an invalid request gets Doorkeeper's HTML
 * error page (never a redirect); else the sign-in page, the consent page, or with auto-approve the redirect.
 */
export const authorizeGet: EndpointHandler = ({ req, res, url }, { state, autoApprove, issuer }) => {
  const checked = checkAuthorizationRequest(url.searchParams, state);
  if (!checked.isValid) {
    sendRequestError(res, checked.error, checked.description);
    return;
  }
  const firstUser = state.users.values().next().value;
  if (autoApprove && firstUser !== undefined) {
    approve(res, state, checked.value, firstUser.id, issuer);
    return;
  }
  const session = state.session(readCookie(req, SESSION_COOKIE));
  const user = session.userId === undefined ? undefined : state.users.get(session.userId);
  if (user === undefined) {
    sendPage(res, 200, renderLoginPage(`${url.pathname}${url.search}`, issueCsrf(session)), session);
    return;
  }
  const page = renderConsentPage(
    checked.value.client.name,
    user.login,
    checked.value.scopes,
    requestFields(url.searchParams),
    issueCsrf(session),
    issueCsrf(session),
  );
  sendPage(res, 200, page, session);
};

/** `POST /oauth2/sign_in`: the resource owner's login form; back to the authorization request on success. */
export const signIn: EndpointHandler = ({ req, res, form }, { state }) => {
  const session = state.session(readCookie(req, SESSION_COOKIE));
  const returnTo = form.get('return_to') ?? '';
  const csrf = form.get('authenticity_token') ?? '';
  if (!returnTo.startsWith('/oauth2/authorize?') || !isVisibleWord(returnTo) || !session.csrfTokens.delete(csrf)) {
    const page = renderAuthorizeErrorPage(
      'invalid_request',
      'The sign-in form expired or was forged. Start again from the application.',
    );
    sendPage(res, 403, page, session);
    return;
  }
  const user = state.authenticateUser(form.get('login') ?? '', form.get('password') ?? '');
  if (user === undefined) {
    sendPage(res, 200, renderLoginPage(returnTo, issueCsrf(session), 'Invalid login or password.'), session);
    return;
  }
  session.userId = user.id;
  sendRedirect(res, returnTo, session);
};

/** `POST /oauth2/authorize`: the consent form's Authorize (approve) or Deny (`_method=delete`). */
export const authorizePost: EndpointHandler = ({ req, res, form }, { state, issuer }) => {
  const session = state.session(readCookie(req, SESSION_COOKIE));
  const csrf = form.get('authenticity_token') ?? '';
  if (session.userId === undefined || !session.csrfTokens.delete(csrf)) {
    const page = renderAuthorizeErrorPage(
      'invalid_request',
      'The consent form expired or was forged. Start again from the application.',
    );
    sendPage(res, 403, page, session);
    return;
  }
  const checked = checkAuthorizationRequest(form, state);
  if (!checked.isValid) {
    sendRequestError(res, checked.error, checked.description, session);
    return;
  }
  const request = checked.value;
  if (form.get('_method')?.toLowerCase() === 'delete') {
    // RFC 9207 §2: `iss` goes with error responses too.
    const params = {
      error: 'access_denied',
      error_description: DESCRIPTIONS.access_denied,
      state: request.state,
      iss: issuer,
    };
    sendRedirect(res, redirectTo(request.redirectUri, params, request.responseType === 'token'), session);
  } else {
    approve(res, state, request, session.userId, issuer, session);
  }
};
