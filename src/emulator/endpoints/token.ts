import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { TokenResponseWire } from '../../oauth/wire.js';
import { isSameSecret } from '../../util/constant-time.js';
import { parseRequestedScopes } from '../authorization-request.js';
import { authenticateClient } from '../client-authentication.js';
import { redirectUriMatches } from '../redirect-uri.js';
import { DESCRIPTIONS, sendJson, sendOAuthError } from '../responses.js';
import { lifetimeS, type AccessTokenRecord, type EmulatorClient, type EmulatorState } from '../state.js';
import type { EndpointHandler } from './context.js';
import { deviceCodeGrant } from './device.js';

/** RFC 8628 §3.4's grant type (the emulator imports nothing of the client's oauth layer but the wire). */
const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

function tokenResponse(record: AccessTokenRecord, refreshToken?: string): TokenResponseWire {
  const body: TokenResponseWire = {
    access_token: record.token,
    token_type: 'bearer',
    scope: record.scopes.join(' '),
    created_at: Math.floor(record.createdAtMs / 1000),
  };
  const expiresIn = lifetimeS(record);
  if (expiresIn !== undefined) body.expires_in = expiresIn;
  if (refreshToken !== undefined) body.refresh_token = refreshToken;
  return body;
}

/**
 * The refresh token grant (RFC 6749 §6; what servers of the family do–4): the client's own
 * live refresh token answers a new pair with the original lifetime; the old refresh token lives
 * until the new access token is first used. Anything else: invalid_grant.
 */
function refreshTokenGrant(
  res: ServerResponse,
  form: URLSearchParams,
  state: EmulatorState,
  client: EmulatorClient,
): void {
  const value = form.get('refresh_token');
  if (value === null || value === '') return missingParameter(res, 'refresh_token');
  const old = state.refreshTokens.find(value, client);
  if (old === undefined) {
    sendOAuthError(res, 400, 'invalid_grant');
    return;
  }
  const access = state.issueToken({ client, ownerId: old.ownerId, scopes: old.scopes, grant: 'authorization_code' });
  const refresh = state.refreshTokens.issue(access, old.token);
  sendJson(res, 200, tokenResponse(access, refresh.token));
}

function verifyPkce(challenge: { value: string; method: 'S256' | 'plain' }, verifier: string): boolean {
  const computed = challenge.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return isSameSecret(computed, challenge.value);
}

function missingParameter(res: ServerResponse, name: string): void {
  sendOAuthError(res, 400, 'invalid_request', {
    error_description: `${DESCRIPTIONS.invalid_request} Missing required parameter: ${name}.`,
  });
}

/** The client credentials grant (RFC 6749 §4.4): confidential clients only. */
function clientCredentialsGrant(
  res: ServerResponse,
  form: URLSearchParams,
  state: EmulatorState,
  client: EmulatorClient,
): void {
  // Doorkeeper 5.5 authenticates a public client by its client_id alone here too, and grants it.
  const scopes = parseRequestedScopes(form.get('scope'));
  if (scopes === undefined) {
    sendOAuthError(res, 400, 'invalid_scope');
    return;
  }
  sendJson(res, 200, tokenResponse(state.issueToken({ client, ownerId: null, scopes, grant: 'client_credentials' })));
}

/** The authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.6): code, redirect URI and verifier checked. */
function authorizationCodeGrant(
  res: ServerResponse,
  form: URLSearchParams,
  state: EmulatorState,
  client: EmulatorClient,
): void {
  const codeValue = form.get('code');
  const redirectUri = form.get('redirect_uri');
  if (codeValue === null || codeValue === '') return missingParameter(res, 'code');
  if (redirectUri === null || redirectUri === '') return missingParameter(res, 'redirect_uri');
  const code = state.findCode(codeValue);
  if (code === undefined || code.client !== client || !redirectUriMatches(code.redirectUri, redirectUri)) {
    sendOAuthError(res, 400, 'invalid_grant');
    return;
  }
  const verifier = form.get('code_verifier');
  if (code.challenge !== undefined) {
    if (verifier === null || verifier === '') return missingParameter(res, 'code_verifier');
    if (!verifyPkce(code.challenge, verifier)) {
      sendOAuthError(res, 400, 'invalid_grant');
      return;
    }
  } else if (verifier !== null && verifier !== '') {
    // Doorkeeper 5.5 (validate_code_verifier): a verifier for a code issued without a challenge is refused.
    sendOAuthError(res, 400, 'invalid_grant');
    return;
  }
  state.consumeCode(code.code);
  const access = state.issueToken({ client, ownerId: code.ownerId, scopes: code.scopes, grant: 'authorization_code' });
  // Only the code flow gets a refresh token (as servers of the family do).
  const refresh = state.hasRefreshTokens ? state.refreshTokens.issue(access).token : undefined;
  sendJson(res, 200, tokenResponse(access, refresh));
}

/** `POST /oauth2/token` (RFC 6749 §4.1.3, §4.4.2, RFC 8628 §3.4; spec §4.2), with Doorkeeper's errors (as servers of the family do). */
export const tokenEndpoint: EndpointHandler = ({ req, res, form }, { state }) => {
  const grantType = form.get('grant_type');
  if (grantType === null || grantType === '') return missingParameter(res, 'grant_type');
  const isRefresh = grantType === 'refresh_token' && state.hasRefreshTokens;
  const isDevice = grantType === DEVICE_CODE_GRANT_TYPE;
  if (grantType !== 'authorization_code' && grantType !== 'client_credentials' && !isRefresh && !isDevice) {
    sendOAuthError(res, 400, 'unsupported_grant_type');
    return;
  }
  const { client, isAuthenticated } = authenticateClient(req, form, state);
  if (client === undefined || !isAuthenticated) {
    sendOAuthError(res, 401, 'invalid_client');
    return;
  }
  if (grantType === 'client_credentials') {
    clientCredentialsGrant(res, form, state, client);
  } else if (isDevice) {
    deviceCodeGrant(res, form, state, client, (access, refresh) => sendJson(res, 200, tokenResponse(access, refresh)));
  } else if (grantType === 'refresh_token') {
    refreshTokenGrant(res, form, state, client);
  } else {
    authorizationCodeGrant(res, form, state, client);
  }
};
