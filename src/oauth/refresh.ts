import type { TokenResponse } from './parse.js';
import type { ClientAuthentication, ServerConfiguration } from './server-configuration.js';
import { parseTokenEndpointResponse } from './token-response.js';

/**
 * Refreshes an access token at `POST {base}/oauth2/token` with `grant_type=refresh_token` (RFC
 * 6749 §6): the refresh token and the client's authentication in the body (`client_id` alone for
 * a public client), and no `scope`, which could only narrow the grant for good (what servers of the family do
 * refresh tokens 2). Returns the new pair; throws `token_endpoint_error` (invalid_grant for a
 * refresh token the server no longer honours), network and malformed-answer errors.
 */
export async function requestTokenRefresh(
  server: ServerConfiguration,
  client: ClientAuthentication,
  refreshToken: string,
): Promise<TokenResponse> {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.clientId,
  });
  if (client.clientSecret !== undefined) body.set('client_secret', client.clientSecret);
  const response = await server.fetch(server.endpoints.token.href, {
    method: 'POST',
    headers: { accept: 'application/json' },
    body,
    redirect: 'manual',
  });
  return parseTokenEndpointResponse(response);
}
