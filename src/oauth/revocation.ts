import { MmauthError } from '../errors.js';
import { describeOAuthFailure } from './describe-error.js';
import {
  authorizationServer,
  clientAuthFor,
  loadOAuth,
  requestOptions,
  type ClientAuthentication,
  type ServerConfiguration,
} from './server-configuration.js';

/**
 * Asks `POST {base}/oauth2/revoke` to revoke `token` (RFC 7009 §2.1; spec §4.4) with the client's
 * authentication in the body. Resolves only on HTTP 200, which proves nothing on the spec's server
 * (200 in every case): callers confirm with token info. Throws `revocation_error` for an OAuth
 * error (Doorkeeper's 403 unauthorized_client), prefixed "the token was NOT revoked"; else what
 * describeOAuthFailure gives.
 */
export async function requestRevocation(
  server: ServerConfiguration,
  client: ClientAuthentication,
  token: string,
  tokenTypeHint?: 'access_token' | 'refresh_token',
): Promise<void> {
  const lib = await loadOAuth();
  const [oauthClient, auth] = clientAuthFor(lib, client);
  const response = await lib.revocationRequest(authorizationServer(server.endpoints), oauthClient, auth, token, {
    ...requestOptions(lib, server),
    ...(tokenTypeHint === undefined ? {} : { additionalParameters: { token_type_hint: tokenTypeHint } }),
  });
  try {
    await lib.processRevocationResponse(response);
  } catch (failure) {
    const error = await describeOAuthFailure(lib, 'revocation_error', 'the revoke endpoint', failure);
    if (error.code !== 'revocation_error') throw error;
    throw new MmauthError('revocation_error', `the token was NOT revoked: ${error.message}`, {
      oauthError: error.oauthError,
      oauthErrorDescription: error.oauthErrorDescription,
      status: error.status,
    });
  }
  await response.body?.cancel();
}
