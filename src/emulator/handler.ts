import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { KNOWN_SCOPES, DEFAULT_SCOPE, type OAuthErrorWire, type TokenInfoDoorkeeper5Wire, type TokenInfoSpecWire, type TokenResponseWire } from '../oauth/wire.js';
import { renderAuthorizeErrorPage, renderConsentPage, renderLoginPage } from './pages.js';
import { lifetimeS, randomToken, secretsEqual, type AccessTokenRecord, type BrowserSession, type EmulatorClient, type EmulatorState } from './state.js';

/** Which server the emulator imitates where the two differ (token info fields, revoke refusals). */
export type EmulatorFlavor = 'spec' | 'doorkeeper5';

/** A request as the emulator received it, for tests that check what a client sent. */
export interface ObservedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body (form bodies of token and revoke requests). */
  body: string;
}

/** What the request handler needs. */
export interface HandlerOptions {
  state: EmulatorState;
  /** Skip sign-in and consent: approve every valid authorization request as the first user. */
  autoApprove: boolean;
  flavor: EmulatorFlavor;
  onRequest: ((request: ObservedRequest) => void) | undefined;
}

const MAX_BODY_BYTES = 64 * 1024;
const SESSION_COOKIE = '_mmauth_emulator_session';
const DESCRIPTIONS: Record<string, string> = {
  invalid_client: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_redirect_uri: "The requested redirect uri is malformed or doesn't match client redirect URI.",
  unsupported_response_type: 'The authorization server does not support this response type.',
  invalid_code_challenge_method: 'The code challenge method must be plain or S256.',
  access_denied: 'The resource owner or authorization server denied the request.',
  invalid_token: 'The access token is invalid',
  unauthorized_client: 'You are not authorized to revoke this token',
};

/**
 * Whether `given` matches the registered redirect URI: scheme, host, path and query equal; the
 * port must match too except for the loopback IP literals 127.0.0.1 and [::1] (RFC 8252 §7.3;
 * server-behaviour.md authorize 5). `localhost` is matched exactly, port included.
 */
export function redirectUriMatches(registered: string, given: string): boolean {
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(given);
  } catch {
    return false;
  }
  const isIpLoopback = a.hostname === '127.0.0.1' || a.hostname === '[::1]';
  return (
    a.protocol === b.protocol &&
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    a.search === b.search &&
    b.hash === '' &&
    (isIpLoopback || a.port === b.port)
  );
}

/** Parses a scope parameter: absent → `service`; commas or unknown scopes → undefined (invalid_scope). */
export function parseRequestedScopes(scope: string | null): string[] | undefined {
  if (scope === null || scope.trim() === '') {
    return [DEFAULT_SCOPE];
  }
  if (scope.includes(',')) {
    return undefined;
  }
  const scopes = [...new Set(scope.split(' ').filter(Boolean))];
  const known: readonly string[] = KNOWN_SCOPES;
  return scopes.every((s) => known.includes(s)) ? scopes : undefined;
}

interface AuthorizeRequest {
  client: EmulatorClient;
  redirectUri: string;
  responseType: 'code' | 'token';
  scopes: string[];
  state: string | undefined;
  challenge: { value: string; method: 'S256' | 'plain' } | undefined;
}

type Checked<T> = { isValid: true; value: T } | { isValid: false; error: string; description?: string };

/** Validates authorization request parameters in Doorkeeper's order (server-behaviour.md authorize 4). */
function checkAuthorizeRequest(params: URLSearchParams, state: EmulatorState): Checked<AuthorizeRequest> {
  const client = state.clients.get(params.get('client_id') ?? '');
  if (client === undefined) return { isValid: false, error: 'invalid_client' };
  const redirectUri = params.get('redirect_uri');
  if (redirectUri === null || !client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
    return { isValid: false, error: 'invalid_redirect_uri' };
  }
  const responseType = params.get('response_type');
  if (responseType === null || responseType === '') {
    return { isValid: false, error: 'invalid_request', description: `${DESCRIPTIONS.invalid_request} Missing required parameter: response_type.` };
  }
  if (responseType !== 'code' && responseType !== 'token') return { isValid: false, error: 'unsupported_response_type' };
  const scopes = parseRequestedScopes(params.get('scope'));
  if (scopes === undefined) return { isValid: false, error: 'invalid_scope' };
  const challengeValue = params.get('code_challenge');
  let challenge: AuthorizeRequest['challenge'];
  if (challengeValue !== null && challengeValue !== '') {
    const method = params.get('code_challenge_method');
    if (method !== 'S256' && method !== 'plain') return { isValid: false, error: 'invalid_code_challenge_method' };
    challenge = { value: challengeValue, method };
  }
  return { isValid: true, value: { client, redirectUri, responseType, scopes, state: params.get('state') ?? undefined, challenge } };
}

/** The fields a consent form carries back, so the POST can be validated like the GET. */
function requestFields(params: URLSearchParams): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of ['client_id', 'redirect_uri', 'state', 'response_type', 'scope', 'code_challenge', 'code_challenge_method']) {
    const value = params.get(name);
    if (value !== null) fields[name] = value;
  }
  return fields;
}

/** `redirect_uri` with `params` appended to its query (code flow) or put in the fragment (implicit). */
function redirectTo(redirectUri: string, params: Record<string, string | undefined>, isFragment: boolean): string {
  const url = new URL(redirectUri);
  const extra = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) extra.set(key, value);
  }
  if (isFragment) {
    url.hash = extra.toString();
  } else {
    for (const [key, value] of extra) url.searchParams.append(key, value);
  }
  return url.href;
}

function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

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

function sendPage(res: ServerResponse, status: number, html: string, session?: BrowserSession): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    ...(session === undefined ? {} : { 'set-cookie': `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax` }),
  });
  res.end(html);
}

function sendRedirect(res: ServerResponse, location: string, session?: BrowserSession): void {
  res.writeHead(302, {
    location,
    'cache-control': 'no-store',
    ...(session === undefined ? {} : { 'set-cookie': `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax` }),
  });
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache', ...headers });
  res.end(JSON.stringify(body));
}

/** An OAuth error answer with Doorkeeper's WWW-Authenticate header (server-behaviour.md token 4). */
function sendOAuthError(res: ServerResponse, status: number, error: string, extra: Partial<OAuthErrorWire> = {}): void {
  const description = DESCRIPTIONS[error] ?? error;
  const body: OAuthErrorWire = { error, error_description: description, ...extra };
  sendJson(res, status, body, {
    'www-authenticate': `Bearer realm="Doorkeeper", error="${error}", error_description="${description.replace(/"/g, "'")}"`,
  });
}

function sendNotFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
  res.end();
}

/** Client authentication: HTTP Basic wins over body parameters (RFC 6749 §2.3.1; server-behaviour.md token 2). */
function authenticateClient(req: IncomingMessage, form: URLSearchParams, state: EmulatorState): { client: EmulatorClient | undefined; isAuthenticated: boolean } {
  let clientId = form.get('client_id') ?? undefined;
  let secret = form.get('client_secret') ?? undefined;
  const basic = /^basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (basic?.[1] !== undefined) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    }
  }
  const client = clientId === undefined ? undefined : state.clients.get(clientId);
  if (client === undefined) return { client: undefined, isAuthenticated: false };
  if (client.clientSecret === undefined) return { client, isAuthenticated: true };
  return { client, isAuthenticated: secret !== undefined && secretsEqual(client.clientSecret, secret) };
}

function tokenResponse(record: AccessTokenRecord): TokenResponseWire {
  const body: TokenResponseWire = { access_token: record.token, token_type: 'bearer', scope: record.scopes.join(' '), created_at: Math.floor(record.createdAtMs / 1000) };
  const expiresIn = lifetimeS(record);
  if (expiresIn !== undefined) {
    body.expires_in = expiresIn;
  }
  return body;
}

function verifyPkce(challenge: { value: string; method: 'S256' | 'plain' }, verifier: string): boolean {
  const computed = challenge.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return secretsEqual(computed, challenge.value);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Creates the emulator's request handler: the four endpoints of spec §4 plus the sign-in form,
 * answering as the spec says and, where it is silent, as server-behaviour.md records Doorkeeper 5.5.
 */
export function createRequestHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { state } = options;

  const approve = (res: ServerResponse, request: AuthorizeRequest, ownerId: number, session?: BrowserSession) => {
    if (request.responseType === 'token') {
      const token = state.issueToken({ client: request.client, ownerId, scopes: request.scopes, grant: 'implicit' });
      const expiresIn = lifetimeS(token);
      sendRedirect(res, redirectTo(request.redirectUri, { access_token: token.token, token_type: 'Bearer', expires_in: expiresIn === undefined ? undefined : String(expiresIn), state: request.state }, true), session);
      return;
    }
    const code = state.issueCode({ client: request.client, ownerId, redirectUri: request.redirectUri, scopes: request.scopes, challenge: request.challenge });
    sendRedirect(res, redirectTo(request.redirectUri, { code: code.code, state: request.state }, false), session);
  };

  const deny = (res: ServerResponse, request: AuthorizeRequest, session: BrowserSession) => {
    const params = { error: 'access_denied', error_description: DESCRIPTIONS.access_denied, state: request.state };
    sendRedirect(res, redirectTo(request.redirectUri, params, request.responseType === 'token'), session);
  };

  const authorizeGet = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const checked = checkAuthorizeRequest(url.searchParams, state);
    if (!checked.isValid) {
      sendPage(res, 200, renderAuthorizeErrorPage(checked.error, checked.description ?? DESCRIPTIONS[checked.error] ?? checked.error));
      return;
    }
    const firstUser = state.users.values().next().value;
    if (options.autoApprove && firstUser !== undefined) {
      approve(res, checked.value, firstUser.id);
      return;
    }
    const session = state.session(readCookie(req, SESSION_COOKIE));
    const user = session.userId === undefined ? undefined : state.users.get(session.userId);
    if (user === undefined) {
      sendPage(res, 200, renderLoginPage(`${url.pathname}${url.search}`, issueCsrf(session)), session);
      return;
    }
    const fields = requestFields(url.searchParams);
    sendPage(res, 200, renderConsentPage(checked.value.client.name, user.login, checked.value.scopes, fields, issueCsrf(session), issueCsrf(session)), session);
  };

  const signIn = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => {
    const session = state.session(readCookie(req, SESSION_COOKIE));
    const returnTo = form.get('return_to') ?? '';
    const csrf = form.get('authenticity_token') ?? '';
    if (!returnTo.startsWith('/oauth2/authorize?') || !session.csrfTokens.delete(csrf)) {
      sendPage(res, 403, renderAuthorizeErrorPage('invalid_request', 'The sign-in form expired or was forged. Start again from the application.'), session);
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

  const authorizePost = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => {
    const session = state.session(readCookie(req, SESSION_COOKIE));
    const csrf = form.get('authenticity_token') ?? '';
    if (session.userId === undefined || !session.csrfTokens.delete(csrf)) {
      sendPage(res, 403, renderAuthorizeErrorPage('invalid_request', 'The consent form expired or was forged. Start again from the application.'), session);
      return;
    }
    const checked = checkAuthorizeRequest(form, state);
    if (!checked.isValid) {
      sendPage(res, 200, renderAuthorizeErrorPage(checked.error, checked.description ?? DESCRIPTIONS[checked.error] ?? checked.error), session);
      return;
    }
    if (form.get('_method')?.toLowerCase() === 'delete') {
      deny(res, checked.value, session);
    } else {
      approve(res, checked.value, session.userId, session);
    }
  };

  const token = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => {
    const grantType = form.get('grant_type');
    if (grantType === null || grantType === '') {
      sendOAuthError(res, 400, 'invalid_request', { error_description: `${DESCRIPTIONS.invalid_request} Missing required parameter: grant_type.` });
      return;
    }
    if (grantType !== 'authorization_code' && grantType !== 'client_credentials') {
      sendOAuthError(res, 400, 'unsupported_grant_type');
      return;
    }
    const { client, isAuthenticated } = authenticateClient(req, form, state);
    if (client === undefined || !isAuthenticated) {
      sendOAuthError(res, 401, 'invalid_client');
      return;
    }
    if (grantType === 'client_credentials') {
      if (client.clientSecret === undefined) {
        sendOAuthError(res, 401, 'invalid_client');
        return;
      }
      const scopes = parseRequestedScopes(form.get('scope'));
      if (scopes === undefined) {
        sendOAuthError(res, 400, 'invalid_scope');
        return;
      }
      sendJson(res, 200, tokenResponse(state.issueToken({ client, ownerId: null, scopes, grant: 'client_credentials' })));
      return;
    }
    const codeValue = form.get('code');
    const redirectUri = form.get('redirect_uri');
    for (const [name, value] of [['code', codeValue], ['redirect_uri', redirectUri]] as const) {
      if (value === null || value === '') {
        sendOAuthError(res, 400, 'invalid_request', { error_description: `${DESCRIPTIONS.invalid_request} Missing required parameter: ${name}.` });
        return;
      }
    }
    const code = state.findCode(codeValue ?? '');
    if (code === undefined || code.client !== client || !redirectUriMatches(code.redirectUri, redirectUri ?? '')) {
      sendOAuthError(res, 400, 'invalid_grant');
      return;
    }
    if (code.challenge !== undefined) {
      const verifier = form.get('code_verifier');
      if (verifier === null || verifier === '') {
        sendOAuthError(res, 400, 'invalid_request', { error_description: `${DESCRIPTIONS.invalid_request} Missing required parameter: code_verifier.` });
        return;
      }
      if (!verifyPkce(code.challenge, verifier)) {
        sendOAuthError(res, 400, 'invalid_grant');
        return;
      }
    }
    state.consumeCode(code.code);
    sendJson(res, 200, tokenResponse(state.issueToken({ client, ownerId: code.ownerId, scopes: code.scopes, grant: 'authorization_code' })));
  };

  const tokenInfo = (req: IncomingMessage, res: ServerResponse) => {
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const record = bearer?.[1] === undefined ? undefined : state.findActiveToken(bearer[1]);
    if (record === undefined) {
      sendOAuthError(res, 401, 'invalid_token', { state: 'unauthorized' });
      return;
    }
    const remainingS = record.expiresAtMs === undefined ? null : Math.max(0, Math.round((record.expiresAtMs - state.nowMs()) / 1000));
    if (options.flavor === 'doorkeeper5') {
      const body: TokenInfoDoorkeeper5Wire = {
        resource_owner_id: record.ownerId,
        scope: record.scopes,
        expires_in: remainingS,
        application: { uid: record.client.clientId },
        created_at: Math.floor(record.createdAtMs / 1000),
      };
      sendJson(res, 200, body);
      return;
    }
    const body: TokenInfoSpecWire = { resource_owner_id: record.ownerId, scope: record.scopes, expires_in_seconds: remainingS, application: { uid: record.client.uid } };
    sendJson(res, 200, body);
  };

  const revoke = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => {
    const { client, isAuthenticated } = authenticateClient(req, form, state);
    const record = state.findActiveToken(form.get('token') ?? '');
    const isOwner = record !== undefined && client !== undefined && record.client === client;
    if (isAuthenticated && isOwner) {
      state.revokeToken(record.token);
    } else if (options.flavor === 'doorkeeper5' && (!isAuthenticated || (record !== undefined && !isOwner && record.client.clientSecret !== undefined))) {
      sendOAuthError(res, 403, 'unauthorized_client');
      return;
    }
    // Spec §4.4: 200 in every case, even when nothing was revoked.
    sendJson(res, 200, {});
  };

  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const needsBody = req.method === 'POST';
    void (needsBody ? readBody(req) : Promise.resolve('')).then(
      (body) => {
        options.onRequest?.({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: body ?? '' });
        if (body === undefined) {
          res.writeHead(413, { 'content-type': 'text/plain' }).end('request body too large');
          return;
        }
        const form = new URLSearchParams(body);
        switch (route) {
          case 'GET /oauth2/authorize':
            return authorizeGet(req, res, url);
          case 'POST /oauth2/authorize':
            return authorizePost(req, res, form);
          case 'POST /oauth2/sign_in':
            return signIn(req, res, form);
          case 'POST /oauth2/token':
            return token(req, res, form);
          case 'GET /oauth2/token/info':
            return tokenInfo(req, res);
          case 'POST /oauth2/revoke':
            return revoke(req, res, form);
          default:
            return sendNotFound(res);
        }
      },
      () => {
        if (!res.headersSent) res.writeHead(400).end();
      },
    );
  };
}
