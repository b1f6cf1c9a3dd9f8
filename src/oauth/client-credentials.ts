import type { TokenResponse } from './parse.js';
import type { ServerConfiguration } from './server-configuration.js';
import { parseTokenEndpointResponse } from './token-response.js';

/**
 * Requests a token with `grant_type=client_credentials` at `POST {base}/oauth2/token` (RFC 6749
 * §4.4.2; spec §4.2 behaviour 2), client_id/client_secret in the body (spec §5.3) and `scope`
 * (space-separated). Throws what parseTokenEndpointResponse and the transport throw.
 *
 * Not through oauth4webapi: its Fetch API objects load Node's internal fetch (http2, tls, zlib),
 * about half of this one-shot command's run time.
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
