import { MmauthError } from '../errors.js';
import { oauthErrorAnswer } from './describe-error.js';
import type { Endpoints } from './endpoints.js';
import type { TokenResponse } from './parse.js';
import {
  authorizationServer,
  clientAuthFor,
  loadOAuth,
  requestOptions,
  type ClientAuthentication,
  type ServerConfiguration,
} from './server-configuration.js';
import { validateTokenEndpointResponse } from './token-response.js';

/** A prepared authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4): what the exchange checks against. */
export interface AuthorizationRequest {
  /** The URL to open in the user agent. */
  url: URL;
  /** 256 random bits, checked on the authorization response (RFC 6749 §10.12). */
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

/** Randomness for an authorization request; tests inject fixed values. */
export interface AuthorizationRandomness {
  state(): string;
  codeVerifier(): string;
}

/**
 * Builds the authorization URL `GET {base}/oauth2/authorize` (RFC 6749 §4.1.1; spec §4.1) with
 * response_type, client_id, redirect_uri, scope, a fresh `state` and, for the code flow, a PKCE
 * S256 challenge (RFC 7636 §4.2). The client secret is never put in this URL, although the spec's
 * endpoint table lists it for the implicit flow (browser history, logs).
 */
export async function createAuthorizationRequest(
  endpoints: Endpoints,
  params: AuthorizationRequestParams,
  random?: AuthorizationRandomness,
): Promise<AuthorizationRequest> {
  const lib = await loadOAuth();
  const state = random?.state() ?? lib.generateRandomState();
  const codeVerifier = random?.codeVerifier() ?? lib.generateRandomCodeVerifier();
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
 * Validates an authorization response (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207) with oauth4webapi:
 * `state` must be `request.state`, else `state_mismatch`; then `iss`, if present or promised, must be
 * the issuer (the base URL without metadata), else `iss_mismatch` or `iss_missing` (checkIssuer);
 * an `error` becomes `authorization_error`; a missing `code` is a `malformed_response`. Returns
 * the parameters, branded for exchangeAuthorizationCode.
 */
export async function validateAuthorizationResponse(
  endpoints: Endpoints,
  clientId: string,
  parameters: URLSearchParams,
  request: AuthorizationRequest,
): Promise<URLSearchParams> {
  const lib = await loadOAuth();
  // Loaded here: its constant-time compare pulls node:crypto, which start-up never loads. An `iss`
  // from a server without metadata is checked too: a wrong one is iss_mismatch at once, never a
  // state mismatch to wait past (RFC 9207 §2.4).
  if (endpoints.issuer !== undefined || parameters.has('iss'))
    (await import('./issuer-check.js')).checkIssuer(endpoints, parameters, request.state);
  let validated: URLSearchParams;
  try {
    validated = lib.validateAuthResponse(
      authorizationServer(endpoints),
      { client_id: clientId },
      parameters,
      request.state,
    );
  } catch (failure) {
    if (failure instanceof lib.AuthorizationResponseError) {
      throw oauthErrorAnswer(
        'authorization_error',
        'the authorization server',
        failure.error,
        failure.error_description,
      );
    }
    if (failure instanceof lib.OperationProcessingError) {
      throw new MmauthError(
        'state_mismatch',
        `callback rejected: ${failure.message.replace('response parameter ', '')}`,
      );
    }
    throw failure;
  }
  if (!validated.get('code')) {
    throw new MmauthError('malformed_response', 'the redirect carried neither an authorization code nor an error');
  }
  return validated;
}

/**
 * Exchanges the code of a validated authorization response at `POST {base}/oauth2/token` (RFC 6749
 * §4.1.3; spec §4.2): grant_type=authorization_code, code, the request's redirect_uri and
 * code_verifier (RFC 7636 §4.5), the client's authentication in the body (spec §5.3). Returns the
 * validated token response; throws `token_endpoint_error`, a network or malformed-answer error.
 */
export async function exchangeAuthorizationCode(
  server: ServerConfiguration,
  client: ClientAuthentication,
  response: URLSearchParams,
  request: AuthorizationRequest,
): Promise<TokenResponse> {
  const lib = await loadOAuth();
  const as = authorizationServer(server.endpoints);
  const [oauthClient, auth] = clientAuthFor(lib, client);
  const options = requestOptions(lib, server);
  const tokenResponse = await lib.authorizationCodeGrantRequest(
    as,
    oauthClient,
    auth,
    response,
    request.redirectUri,
    request.codeVerifier,
    options,
  );
  return validateTokenEndpointResponse(lib, tokenResponse, (r) =>
    lib.processAuthorizationCodeResponse(as, oauthClient, r),
  );
}
