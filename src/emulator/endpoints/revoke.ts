import { authenticateClient } from '../client-authentication.js';
import { sendJson, sendOAuthError } from '../responses.js';
import type { EndpointHandler } from './context.js';

/**
 * `POST /oauth2/revoke` (RFC 7009 §2; spec §4.4): revokes a token of the authenticated client.
 * The spec answers 200 in every case; Doorkeeper 5 answers 403 unauthorized_client to a failed
 * client authentication or another confidential client's token (server-behaviour.md revoke 2).
 */
export const revokeEndpoint: EndpointHandler = ({ req, res, form }, { state, flavor }) => {
  const { client, isAuthenticated } = authenticateClient(req, form, state);
  const record = state.findActiveToken(form.get('token') ?? '');
  const isOwner = record !== undefined && client !== undefined && record.client === client;
  if (isAuthenticated && isOwner) {
    state.revokeToken(record.token);
  } else if (
    flavor === 'doorkeeper5' &&
    (!isAuthenticated || (record !== undefined && !isOwner && record.client.clientSecret !== undefined))
  ) {
    sendOAuthError(res, 403, 'unauthorized_client');
    return;
  }
  sendJson(res, 200, {});
};
