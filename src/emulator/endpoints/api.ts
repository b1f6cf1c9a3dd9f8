import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorState } from '../state.js';
import { bearerRecord } from '../bearer.js';
import { sendJson } from '../responses.js';
import type { EndpointHandler } from './context.js';

/** Doorkeeper 5.5's descriptions of a token that is not live, by reason (`doorkeeper.errors.messages.invalid_token`). */
const INVALID_TOKEN = {
  revoked: 'The access token was revoked',
  expired: 'The access token expired',
  unknown: 'The access token is invalid',
} as const;

/**
 * Doorkeeper's 401 for a token it does not know alive, as `doorkeeper_authorize!` sends it (RFC
 * 6750 §3.1): no body (`head :unauthorized`), the reason in `WWW-Authenticate`, no-store.
 */
function sendInvalidToken(req: IncomingMessage, res: ServerResponse, state: EmulatorState): void {
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const description = INVALID_TOKEN[bearer === undefined ? 'unknown' : state.whyNotLive(bearer)];
  res.writeHead(401, {
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'www-authenticate': `Bearer realm="Doorkeeper", error="invalid_token", error_description="${description}"`,
  });
  res.end();
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
    sendInvalidToken(req, res, state);
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
    sendInvalidToken(req, res, state);
    return;
  }
  sendJson(res, 200, {
    method: req.method ?? 'GET',
    query: Object.fromEntries(url.searchParams),
    content_type: req.headers['content-type'] ?? null,
    body,
  });
};
