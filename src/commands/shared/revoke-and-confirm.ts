import { hasErrorCode, MmauthError } from '../../errors.js';
import { requestRevocation } from '../../oauth/revocation.js';
import type { ClientAuthentication, ServerConfiguration } from '../../oauth/server-configuration.js';
import { lookUpTokenInfo } from '../../oauth/token-info.js';

/**
 * Revokes `accessToken` (RFC 7009 §2; spec §4.4) and confirms it with token info (spec §4.3, which
 * must then answer 401). Resolves true when confirmed, false when the server has no token info
 * endpoint (404: RFC 7009's reading of the 200 is taken). A public client (no secret) sends
 * `client_id` alone. Throws `revocation_error` when the server refuses, `revocation_not_confirmed`
 * when token info still accepts the token, `client_secret_required` for either without a secret.
 */
export async function revokeAndConfirm(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<boolean> {
  try {
    return await revokeThenLook(server, client, accessToken);
  } catch (error) {
    throw client.clientSecret === undefined && isRefusal(error) ? secretRequired(error) : error;
  }
}

/** A refusal that, for a client that sent no secret, means the token's client is confidential. */
function isRefusal(error: unknown): boolean {
  if (hasErrorCode(error, 'revocation_not_confirmed')) return true;
  return (
    hasErrorCode(error, 'revocation_error') &&
    ['unauthorized_client', 'invalid_client'].includes(error.oauthError ?? '')
  );
}

function secretRequired(cause: unknown): MmauthError {
  return new MmauthError(
    'client_secret_required',
    'the token was NOT revoked: its client is confidential, and revoking it needs the client secret',
    {
      cause,
      hint: 'give it with MMAUTH_CLIENT_SECRET, --client-secret-file PATH or --client-secret-stdin',
    },
  );
}

async function revokeThenLook(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<boolean> {
  await requestRevocation(server, client, accessToken);
  let isActive: boolean;
  try {
    isActive = (await lookUpTokenInfo(server, accessToken)).isActive;
  } catch (error) {
    if (hasErrorCode(error, 'unexpected_status') && error.status === 404) return false;
    throw error;
  }
  if (isActive) {
    const message =
      'the token was NOT revoked: the revoke endpoint answered 200 but token info still accepts the token';
    throw new MmauthError('revocation_not_confirmed', message);
  }
  return true;
}
