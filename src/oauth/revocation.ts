import { describeOAuthFailure } from './describe-error.js';
import { authorizationServer, loadOAuth, requestOptions, type ClientCredentials, type OAuthPeer } from './peer.js';

/**
 * Asks `POST {base}/oauth2/revoke` to revoke `token` (spec §4.4; RFC 7009 §2.1) with client_id,
 * client_secret (when there is one) and token in the body. Resolves only on HTTP 200 — which, on
 * the spec's server, proves nothing (it answers 200 in every case): callers confirm with token
 * info. Doorkeeper's 403 unauthorized_client → AuthError (exit 4); other statuses → ServerError.
 */
export async function requestRevocation(peer: OAuthPeer, client: ClientCredentials, token: string): Promise<void> {
  const lib = await loadOAuth();
  const as = authorizationServer(peer.endpoints);
  const auth = client.clientSecret === undefined ? lib.None() : lib.ClientSecretPost(client.clientSecret);
  const response = await lib.revocationRequest(as, { client_id: client.clientId }, auth, token, requestOptions(lib, peer));
  try {
    await lib.processRevocationResponse(response);
  } catch (failure) {
    throw await describeOAuthFailure(lib, 'the revoke endpoint', failure);
  }
  await response.body?.cancel();
}
