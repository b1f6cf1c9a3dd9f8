import type { ServerResponse } from 'node:http';
import { bearerRecord } from '../bearer.js';
import { sendJson } from '../responses.js';
import type { EndpointHandler } from './context.js';

const INVALID_TOKEN = 'The access token is invalid';

/** Doorkeeper's 401 for a token it does not know alive (RFC 6750 §3.1). */
function sendInvalidToken(res: ServerResponse): void {
  sendJson(
    res,
    401,
    { error: 'invalid_token', error_description: INVALID_TOKEN },
    { 'www-authenticate': `Bearer realm="Doorkeeper", error="invalid_token", error_description="${INVALID_TOKEN}"` },
  );
}

/**
 * The emulator's own protected resource, so that `mmauth api` can be tried offline (not the
 * service's API, whose mind-map operations are not described): `GET /api/me` answers the token's
 * owner, scopes and application for a live bearer token with the `service` scope; Doorkeeper's 401
 * invalid_token for an expired, revoked or unknown one (RFC 6750 §3.1), 403 insufficient_scope
 * without `service`. A use of the token, like token info (it retires a rotated refresh token).
 */
export const apiMe: EndpointHandler = ({ req, res }, { state }) => {
  const record = bearerRecord(req, state);
  if (record === undefined) {
    sendInvalidToken(res);
    return;
  }
  if (!record.scopes.includes('service')) {
    const description = 'The request requires higher privileges than provided by the access token.';
    sendJson(
      res,
      403,
      { error: 'insufficient_scope', error_description: description },
      {
        'www-authenticate': `Bearer realm="Doorkeeper", error="insufficient_scope", error_description="${description}", scope="service"`,
      },
    );
    return;
  }
  sendJson(res, 200, { id: record.ownerId, scope: record.scopes.join(' '), application_uid: record.client.clientId });
};

/** `/api/echo` (any method): what the request carried, for trying `mmauth api -X POST -d …` offline. */
export const apiEcho: EndpointHandler = ({ req, res, url, body }, { state }) => {
  if (bearerRecord(req, state) === undefined) {
    sendInvalidToken(res);
    return;
  }
  sendJson(res, 200, {
    method: req.method ?? 'GET',
    query: Object.fromEntries(url.searchParams),
    content_type: req.headers['content-type'] ?? null,
    body,
  });
};
