import type { TokenResponse } from './parse.js';
import type { ServerConfiguration } from './server-configuration.js';
import { parseTokenEndpointResponse } from './token-response.js';

/**
 * Requests a token with `grant_type=client_credentials` at `POST {base}/oauth2/token` (RFC 6749
 * §4.4.2; spec §5.3: id and secret in the body) for `scope`. Throws what the transport and
 * parseTokenEndpointResponse throw. Not through oauth4webapi: its Fetch objects load Node's fetch.
 */
export async function requestClientCredentialsToken(
  server: ServerConfiguration,
  clientId: string,
  clientSecret: string,
  scope: string,
): Promise<TokenResponse> {
  const response = await server.fetch(server.endpoints.token.href, {
    method: 'POST',
    headers: { accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope,
    }),
    redirect: 'manual',
  });
  return parseTokenEndpointResponse(response);
}
