import { authenticateClient } from '../client-authentication.js';
import { sendJson, sendNotFound, sendOAuthError } from '../responses.js';
import { isDoorkeeper, type EndpointHandler } from './context.js';

/**
 * `POST /oauth2/introspect` (RFC 7662 §2), served in the `doorkeeper5` flavor as Doorkeeper 5.5 does
 * (the spec's server has none: 404). The caller authenticates as a client (Basic or body); a failed
 * authentication answers 401 `invalid_client`. The token is judged by its record (RFC 7662 §2.2):
 * `active: true` with scope, client_id, token_type, exp and iat while it is neither expired nor
 * revoked and belongs to the caller, else `{"active": false}`. Introspection is no use of the token:
 * it retires nothing (as servers of the family do).
 */
export const introspectEndpoint: EndpointHandler = ({ req, res, form }, { state, flavor }) => {
  if (!isDoorkeeper(flavor)) {
    sendNotFound(res);
    return;
  }
  const { client, isAuthenticated } = authenticateClient(req, form, state);
  if (client === undefined || !isAuthenticated) {
    sendOAuthError(res, 401, 'invalid_client');
    return;
  }
  const record = state.findActiveToken(form.get('token') ?? '');
  if (record === undefined || record.client !== client) {
    sendJson(res, 200, { active: false });
    return;
  }
  sendJson(res, 200, {
    active: true,
    scope: record.scopes.join(' '),
    client_id: record.client.clientId,
    token_type: 'Bearer',
    exp: record.expiresAtMs === undefined ? null : Math.floor(record.expiresAtMs / 1000),
    iat: Math.floor(record.createdAtMs / 1000),
  });
};
