import type { TokenInfoDoorkeeper5Wire, TokenInfoSpecWire } from '../../oauth/wire.js';
import { bearerRecord } from '../bearer.js';
import { sendJson, sendOAuthError } from '../responses.js';
import { isDoorkeeper, type EndpointHandler } from './context.js';

/**
 * `GET /oauth2/token/info` (spec §4.3): the spec's record, or Doorkeeper 5's in that flavor
 * (as servers of the family do); 401 invalid_token for any token it does not know alive.
 */
export const tokenInfoEndpoint: EndpointHandler = ({ req, res }, { state, flavor }) => {
  const record = bearerRecord(req, state);
  if (record === undefined) {
    sendOAuthError(res, 401, 'invalid_token', { state: 'unauthorized' });
    return;
  }
  const remainingS =
    record.expiresAtMs === undefined ? null : Math.max(0, Math.round((record.expiresAtMs - state.nowMs()) / 1000));
  if (isDoorkeeper(flavor)) {
    const body: TokenInfoDoorkeeper5Wire = {
      resource_owner_id: record.ownerId,
      scope: record.scopes,
      expires_in: remainingS,
      application: { uid: record.client.clientId },
      created_at: Math.floor(record.createdAtMs / 1000),
    };
    sendJson(res, 200, body);
    return;
  }
  const body: TokenInfoSpecWire = {
    resource_owner_id: record.ownerId,
    scope: record.scopes,
    expires_in_seconds: remainingS,
    application: { uid: record.client.uid },
  };
  sendJson(res, 200, body);
};
