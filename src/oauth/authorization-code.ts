import { AuthError, ServerError } from '../errors.js';
import type { Endpoints } from './endpoints.js';
import { oauthErrorToCliError } from './describe-error.js';
import type { TokenResponse } from './parse.js';
import { authorizationServer, loadOAuth, requestOptions, type ClientCredentials, type OAuthPeer } from './peer.js';
import { judgeTokenResponse } from './token-response.js';

/** A prepared authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4). */
export interface AuthorizationRequest {
  /** The URL to open in the user agent. */
  url: URL;
  /** 128+ bits of randomness, checked on the callback (RFC 6749 §10.12). */
  state: string;
  /** PKCE code_verifier (RFC 7636 §4.1); secret, sent only to the token endpoint. */
  codeVerifier: string;
  redirectUri: string;
}

/** Parameters of an authorization request. */
export interface AuthorizationRequestParams {
  clientId: string;
  redirectUri: string;
  /** Space-separated scopes. */
  scope: string;
  /** `code` (authorization code flow, default) or `token` (implicit flow). */
  responseType?: 'code' | 'token';
}

/**
 * Builds the authorization URL `GET {base}/oauth2/authorize` (spec §4.1; RFC 6749 §4.1.1) with
 * response_type, client_id, redirect_uri, scope, a fresh `state` (256 random bits) and, for the
 * code flow, a PKCE S256 challenge (RFC 7636 §4.2). The client secret is never put in this URL,
 * not even for the implicit flow, where the spec's endpoint table lists it (browser history, logs).
 */
export async function createAuthorizationRequest(endpoints: Endpoints, params: AuthorizationRequestParams): Promise<AuthorizationRequest> {
  const lib = await loadOAuth();
  const state = lib.generateRandomState();
  const codeVerifier = lib.generateRandomCodeVerifier();
  const url = new URL(endpoints.authorize);
  url.searchParams.set('response_type', params.responseType ?? 'code');
  url.searchParams.set('client_id', params.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('scope', params.scope);
  url.searchParams.set('state', state);
  if (params.responseType !== 'token') {
    // PKCE binds the code to this client (RFC 7636); the implicit flow has no code to bind.
    url.searchParams.set('code_challenge', await lib.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return { url, state, codeVerifier, redirectUri: params.redirectUri };
}

/**
 * A callback that does not belong to this login: missing or wrong `state`, or an `iss` naming
 * another server (RFC 9207). `login` refuses it and keeps waiting for the real one.
 */
export class ForeignCallbackError extends AuthError {}

/**
 * Validates the parameters the redirect URI received (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207) with
 * oauth4webapi: `iss` if present must be the base URL, `state` must equal `expectedState`
 * (else ForeignCallbackError), an `error` becomes AuthError/… via oauthErrorToCliError, a missing
 * `code` a ServerError. Returns the parameters, branded for exchangeAuthorizationCode.
 */
export async function validateCallback(endpoints: Endpoints, clientId: string, parameters: URLSearchParams, expectedState: string): Promise<URLSearchParams> {
  const lib = await loadOAuth();
  try {
    const validated = lib.validateAuthResponse(authorizationServer(endpoints), { client_id: clientId }, parameters, expectedState);
    if (!validated.get('code')) {
      throw new ServerError('the redirect carried neither an authorization code nor an error');
    }
    return validated;
  } catch (failure) {
    if (failure instanceof lib.AuthorizationResponseError) {
      throw oauthErrorToCliError('the authorization server', failure.error, failure.error_description);
    }
    if (failure instanceof lib.OperationProcessingError) {
      throw new ForeignCallbackError(`callback rejected: ${failure.message.replace('response parameter ', '')}`, {
        hint: 'this redirect does not belong to the login in progress',
      });
    }
    throw failure;
  }
}

/**
 * Exchanges an authorization code at `POST {base}/oauth2/token` (spec §4.2; RFC 6749 §4.1.3):
 * grant_type=authorization_code, code, the same redirect_uri, code_verifier (RFC 7636 §4.5), and
 * client_id/client_secret in the body (spec §5.3). Returns the validated token response; throws
 * AuthError for invalid_client/invalid_grant (exit 4), NetworkError (3), ServerError (1).
 */
export async function exchangeAuthorizationCode(
  peer: OAuthPeer,
  client: ClientCredentials,
  callbackParameters: URLSearchParams,
  redirectUri: string,
  codeVerifier: string,
): Promise<TokenResponse> {
  const lib = await loadOAuth();
  const as = authorizationServer(peer.endpoints);
  const oauthClient = { client_id: client.clientId };
  const auth = client.clientSecret === undefined ? lib.None() : lib.ClientSecretPost(client.clientSecret);
  const response = await lib.authorizationCodeGrantRequest(as, oauthClient, auth, callbackParameters, redirectUri, codeVerifier, requestOptions(lib, peer));
  return judgeTokenResponse(lib, response, (r) => lib.processAuthorizationCodeResponse(as, oauthClient, r));
}
