import { authenticateClient } from '../client-authentication.js';
import { sendJson, sendOAuthError } from '../responses.js';
import type { EmulatorClient, EmulatorState } from '../state.js';
import { isDoorkeeper, type EndpointHandler } from './context.js';

/** The grant a revoked `token` names: an access token or a refresh token, its client and its access expiry. */
interface NamedGrant {
  client: EmulatorClient;
  accessToken: string;
  accessExpiresAtMs: number | undefined;
}

function grantOf(token: string, state: EmulatorState): NamedGrant | undefined {
  const access = state.findToken(token);
  if (access !== undefined) {
    return { client: access.client, accessToken: access.token, accessExpiresAtMs: access.expiresAtMs };
  }
  const refresh = state.refreshTokens.lookUp(token);
  if (refresh === undefined) return undefined;
  return { client: refresh.client, accessToken: refresh.accessToken, accessExpiresAtMs: refresh.accessExpiresAtMs };
}

/**
 * `POST /oauth2/revoke` (RFC 7009 §2; spec §4.4): an access token or a refresh token of the
 * authenticated client revokes the pair (as servers of the family do). The spec answers 200 in
 * every case. Doorkeeper 5 answers 403 unauthorized_client to a failed client authentication or
 * another confidential client's token, and leaves alone the pair of an expired access token (its
 * refresh token lives on).
 */
export const revokeEndpoint: EndpointHandler = ({ req, res, form }, { state, flavor }) => {
  const { client, isAuthenticated } = authenticateClient(req, form, state);
  const grant = grantOf(form.get('token') ?? '', state);
  const isOwner = grant !== undefined && client !== undefined && grant.client === client;
  if (isAuthenticated && isOwner) {
    const isExpired = grant.accessExpiresAtMs !== undefined && grant.accessExpiresAtMs <= state.nowMs();
    if (!(isDoorkeeper(flavor) && isExpired)) {
      state.revokeToken(grant.accessToken);
      state.refreshTokens.revoke(form.get('token') ?? '');
    }
  } else if (
    isDoorkeeper(flavor) &&
    (!isAuthenticated || (grant !== undefined && !isOwner && grant.client.clientSecret !== undefined))
  ) {
    sendOAuthError(res, 403, 'unauthorized_client');
    return;
  }
  sendJson(res, 200, {});
};
