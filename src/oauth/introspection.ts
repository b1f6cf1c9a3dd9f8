import { describeOAuthFailure } from './describe-error.js';
import {
  authorizationServer,
  clientAuthFor,
  loadOAuth,
  requestOptions,
  type ClientAuthentication,
  type ServerConfiguration,
} from './server-configuration.js';

/** What an introspection request proved of the client's credentials: accepted, refused, or no endpoint to ask. */
export type ClientCheck = 'accepted' | 'refused' | 'no_introspection';

/** A token no server issued: introspecting it changes nothing and proves only the caller's credentials. */
const PROBE_TOKEN = 'mmauth-doctor-probe';

/**
 * Proves a client's credentials without changing anything on the server: one token introspection
 * request (RFC 7662 §2.1, `POST {base}/oauth2/introspect`, Doorkeeper 5.5) for a token no server
 * issued, authenticated as the client (secret in the body). 200 → `accepted` (the answer's
 * `active` says nothing here); 401 `invalid_client` → `refused`; 404 → `no_introspection` (a
 * server that predates it, or the spec's). Never presents or spends a token.
 * Throws what describeOAuthFailure gives for any other answer or a network failure.
 */
export async function checkClientCredentials(
  server: ServerConfiguration,
  client: ClientAuthentication,
): Promise<ClientCheck> {
  const lib = await loadOAuth();
  const [oauthClient, auth] = clientAuthFor(lib, client);
  const as = { ...authorizationServer(server.endpoints), introspection_endpoint: server.endpoints.introspect.href };
  const response = await lib.introspectionRequest(as, oauthClient, auth, PROBE_TOKEN, requestOptions(lib, server));
  if (response.status === 404) {
    await response.body?.cancel();
    return 'no_introspection';
  }
  try {
    await lib.processIntrospectionResponse(as, oauthClient, response);
    return 'accepted';
  } catch (failure) {
    const error = await describeOAuthFailure(lib, 'token_endpoint_error', 'the introspection endpoint', failure);
    if (error.oauthError === 'invalid_client') return 'refused';
    throw error;
  }
}
