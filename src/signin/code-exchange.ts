import { hasErrorCode, MmauthError } from '../errors.js';
import {
  exchangeAuthorizationCode,
  validateAuthorizationResponse,
  type AuthorizationRequest,
} from '../oauth/authorization-code.js';
import type { TokenResponse } from '../oauth/parse.js';
import type { ClientAuthentication, ServerConfiguration } from '../oauth/server-configuration.js';

/** How one authorization response becomes a token: validate it, then exchange its code (or read its fragment). */
export type ResponseJudge = (url: URL) => Promise<TokenResponse>;

/** Whether `error` is the token endpoint's `invalid_client` (RFC 6749 §5.2): the client failed to authenticate. */
function isInvalidClient(error: unknown): error is MmauthError {
  return hasErrorCode(error, 'token_endpoint_error') && error.oauthError === 'invalid_client';
}

/**
 * A public attempt's invalid_client: the server knows this client as confidential, so it needs its
 * secret. The error says so (`details.reason` `confidential_client`: the command line's hint names
 * where a secret comes from, the library's its option).
 */
export function asConfidentialClientError(error: unknown): unknown {
  if (!isInvalidClient(error)) return error;
  return new MmauthError(
    'token_endpoint_error',
    `${error.message.replace(/[.\s]+$/, '')}: the server knows this client as confidential, and no client secret was given`,
    {
      oauthError: error.oauthError,
      oauthErrorDescription: error.oauthErrorDescription,
      status: error.status,
      details: { reason: 'confidential_client' },
    },
  );
}

/**
 * The code flow's judge (RFC 6749 §4.1.2–§4.1.3): validates the authorization response against
 * `request`, then exchanges its code. When a public attempt (no secret) is refused with
 * `invalid_client` and `askSecret` is given (a terminal), asks for the secret and retries the
 * exchange once with the same code and verifier; the refusal authenticated no client, so the server
 * has not spent the code (Doorkeeper authenticates the client before it looks at the grant).
 * Throws what validation and the exchange throw, invalid_client worded by asConfidentialClientError.
 */
export function codeFlowJudge(
  server: ServerConfiguration,
  client: ClientAuthentication,
  request: AuthorizationRequest,
  askSecret?: () => Promise<string>,
): ResponseJudge {
  return async (url) => {
    const parameters = await validateAuthorizationResponse(
      server.endpoints,
      client.clientId,
      url.searchParams,
      request,
    );
    try {
      return await exchangeAuthorizationCode(server, client, parameters, request);
    } catch (error) {
      if (client.clientSecret !== undefined || !isInvalidClient(error)) throw error;
      if (askSecret === undefined) throw asConfidentialClientError(error);
      const clientSecret = await askSecret();
      return await exchangeAuthorizationCode(server, { ...client, clientSecret }, parameters, request);
    }
  };
}
