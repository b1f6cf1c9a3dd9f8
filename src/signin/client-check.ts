import { MmauthError } from '../errors.js';
import { oauthErrorFields } from '../oauth/describe-error.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';

/**
 * Checks, before a browser opens, that the token endpoint takes `clientId` without a secret (a
 * public client, RFC 6749 §2.1; RFC 8252 §8.4): one request, `grant_type=authorization_code` with a
 * code nobody issued, `redirectUri`, and no secret. A server of the family authenticates the client
 * before it looks at the grant (RFC 6749 §5.2): `invalid_client` means the client is confidential;
 * any other answer (`invalid_grant` for the made-up code) lets the sign-in go on. Mints nothing.
 * Throws `client_secret_required` for a confidential client, `authorization_request_rejected`
 * (and the probe's other errors) for a client the authorization endpoint refuses, and network errors
 * as the transport throws them.
 */
export async function assertPublicClient(
  server: ServerConfiguration,
  clientId: string,
  redirectUri: string,
  scope: string,
): Promise<void> {
  const response = await server.fetch(server.endpoints.token.href, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'mmauth-client-check',
      redirect_uri: redirectUri,
      client_id: clientId,
    }),
    redirect: 'manual',
  });
  if (response.status !== 400 && response.status !== 401) return;
  let fields;
  try {
    fields = oauthErrorFields(JSON.parse(new TextDecoder().decode(response.body)));
  } catch {
    return;
  }
  if (fields?.error !== 'invalid_client') return;
  // invalid_client is also what a client the server does not know gets: the authorization endpoint
  // tells them apart (as the command line's login probe does: one GET, no browser), and its refusal
  // (`authorization_request_rejected`) is the one to report.
  const [{ createAuthorizationRequest }, { probeAuthorizationEndpoint }] = await Promise.all([
    import('../oauth/authorization-code.js'),
    import('../oauth/authorization-probe.js'),
  ]);
  const request = await createAuthorizationRequest(server.endpoints, { clientId, redirectUri, scope });
  await probeAuthorizationEndpoint(server, request.url);
  throw new MmauthError(
    'client_secret_required',
    `${server.endpoints.token.origin} knows client ${clientId} as confidential, and no client secret was given`,
    { status: response.status, oauthError: fields.error },
  );
}
