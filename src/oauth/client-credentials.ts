import type { TokenResponse } from './parse.js';
import { authorizationServer, loadOAuth, requestOptions, type OAuthPeer } from './peer.js';
import { judgeTokenResponse } from './token-response.js';

/**
 * Requests a token with `grant_type=client_credentials` at `POST {base}/oauth2/token` (spec §4.2
 * behaviour 2; RFC 6749 §4.4.2), client_id/client_secret in the body (spec §5.3) and `scope`
 * (space-separated). Throws AuthError for invalid_client (exit 4), UsageError for invalid_scope
 * (2), NetworkError (3), ServerError (1).
 */
export async function requestClientCredentialsToken(peer: OAuthPeer, clientId: string, clientSecret: string, scope: string): Promise<TokenResponse> {
  const lib = await loadOAuth();
  const as = authorizationServer(peer.endpoints);
  const oauthClient = { client_id: clientId };
  const response = await lib.clientCredentialsGrantRequest(as, oauthClient, lib.ClientSecretPost(clientSecret), new URLSearchParams({ scope }), requestOptions(lib, peer));
  return judgeTokenResponse(lib, response, (r) => lib.processClientCredentialsResponse(as, oauthClient, r));
}
