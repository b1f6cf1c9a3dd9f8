import type { AuthorizationRequest } from '../oauth/authorization-code.js';
import type { ClientAuthentication, ServerConfiguration } from '../oauth/server-configuration.js';

/**
 * Asks the authorization endpoint once before waiting (probeAuthorizationEndpoint), so that a
 * request it rejects fails at once (`authorization_request_rejected`). A probe redirect carrying an
 * access token (an implicit-flow server that approves without asking) is never used: that token is
 * revoked at once with `client`, and a failure to is a warning.
 */
export async function probeBeforeWaiting(
  server: ServerConfiguration,
  request: AuthorizationRequest,
  client: ClientAuthentication,
  notices: { warn(line: string): void },
): Promise<void> {
  const { probeAuthorizationEndpoint } = await import('../oauth/authorization-probe.js');
  const outcome = await probeAuthorizationEndpoint(server, request.url);
  if (outcome.kind !== 'redirect') return;
  const fragment = new URLSearchParams(outcome.location.split('#')[1] ?? '');
  const leaked = fragment.get('access_token');
  if (leaked === null || leaked === '') return;
  const { requestRevocation } = await import('../oauth/revocation.js');
  await requestRevocation(server, client, leaked).catch((error: unknown) => {
    notices.warn(
      `the probe's own token could not be revoked: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}
