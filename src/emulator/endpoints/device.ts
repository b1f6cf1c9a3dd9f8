import type { ServerResponse } from 'node:http';
import { escapeHtml } from '../../util/escape-html.js';
import { parseRequestedScopes } from '../authorization-request.js';
import { authenticateClient } from '../client-authentication.js';
import type { DeviceCodeRecord } from '../device-codes.js';
import { renderPage } from '../pages.js';
import { sendJson, sendOAuthError, sendPage } from '../responses.js';
import type { EmulatorState } from '../state.js';
import type { EndpointHandler } from './context.js';

/** Where the emulator serves the device authorization endpoint (GitLab's is `/oauth/authorize_device`). */
export const DEVICE_AUTHORIZATION_PATH = '/oauth2/authorize_device';
/** The verification page a user opens on another device (RFC 8628 §3.3). */
export const VERIFICATION_PATH = '/oauth2/device';

/**
 * `POST /oauth2/authorize_device` (RFC 8628 §3.1, §3.2): the client authenticated as at the token
 * endpoint (a public client by its client_id), its scopes checked; answers the device code, the
 * user code, the verification address with and without the code, `expires_in` and `interval`.
 */
export const deviceAuthorizationEndpoint: EndpointHandler = ({ req, res, form }, { state }) => {
  const { client, isAuthenticated } = authenticateClient(req, form, state);
  if (client === undefined || !isAuthenticated) return sendOAuthError(res, 401, 'invalid_client');
  const scopes = parseRequestedScopes(form.get('scope'));
  if (scopes === undefined) return sendOAuthError(res, 400, 'invalid_scope');
  const record = state.deviceCodes.issue(client, scopes);
  // The Host the request came by (already checked against the emulator's own names).
  const verification = `http://${req.headers.host ?? '127.0.0.1'}${VERIFICATION_PATH}`;
  sendJson(res, 200, {
    device_code: record.deviceCode,
    user_code: record.userCode,
    verification_uri: verification,
    verification_uri_complete: `${verification}?user_code=${encodeURIComponent(record.userCode)}`,
    expires_in: state.deviceCodes.lifetimeS,
    interval: state.deviceCodes.intervalS,
  });
};

/** The demo user, who approves or denies on the verification page. */
const demoUserId = (state: EmulatorState): number => state.users.values().next().value?.id ?? 1;

/** The verification page: a form for the code (with `userCode` filled in), Approve and Deny. */
function codeForm(userCode: string, error?: string): string {
  return renderPage(
    'Connect a device',
    `<h1>Connect a device</h1>
${error === undefined ? '' : `<p class="error" id="error">${escapeHtml(error)}</p>`}
<p>Enter the code the device shows. Approve only a sign-in you started yourself.</p>
<form method="post" action="${VERIFICATION_PATH}" id="device-form">
<label for="user_code">Code</label><input type="text" id="user_code" name="user_code" value="${escapeHtml(userCode)}" autocomplete="off" autofocus>
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>`,
  );
}

function decided(res: ServerResponse, record: DeviceCodeRecord, decision: 'approved' | 'denied'): void {
  const what = decision === 'approved' ? 'approved: the device is signing in' : 'denied: the device will not sign in';
  sendPage(
    res,
    200,
    renderPage(
      `Device ${decision}`,
      `<h1 id="result">Device ${decision}</h1><p>${escapeHtml(record.client.name)} — ${what}. You may close this page.</p>`,
    ),
  );
}

/**
 * `GET /oauth2/device[?user_code=…]` (RFC 8628 §3.3): the form for the code; with auto-approve and
 * the code of a pending authorization in the address (`verification_uri_complete`), approved at
 * once as the demo user.
 */
export const devicePageGet: EndpointHandler = ({ res, url }, { state, autoApprove }) => {
  const userCode = url.searchParams.get('user_code') ?? '';
  const record = userCode === '' ? undefined : state.deviceCodes.pending(userCode);
  if (autoApprove && record !== undefined) {
    state.deviceCodes.decide(record, 'approved', demoUserId(state));
    return decided(res, record, 'approved');
  }
  sendPage(res, 200, codeForm(userCode));
};

/** `POST /oauth2/device` (`user_code`, `decision` approve or deny): the demo user's decision on a pending code. */
export const devicePagePost: EndpointHandler = ({ res, form }, { state }) => {
  const userCode = form.get('user_code') ?? '';
  const record = state.deviceCodes.pending(userCode);
  if (record === undefined)
    return sendPage(res, 200, codeForm(userCode, 'No sign-in waits for that code (mistyped, used or expired).'));
  const decision = form.get('decision') === 'deny' ? 'denied' : 'approved';
  state.deviceCodes.decide(record, decision, demoUserId(state));
  decided(res, record, decision);
};

/**
 * The device code grant at `POST /oauth2/token` (RFC 8628 §3.4, §3.5): `authorization_pending`
 * until the user decides, `slow_down` for a poll sooner than the interval, `access_denied`,
 * `expired_token`, `invalid_grant` for another client's or an unknown code; an approved code
 * answers a token with a refresh token (a code-flow grant) once.
 */
export function deviceCodeGrant(
  res: ServerResponse,
  form: URLSearchParams,
  state: EmulatorState,
  client: DeviceCodeRecord['client'],
  respond: (access: ReturnType<EmulatorState['issueToken']>, refreshToken: string | undefined) => void,
): void {
  const deviceCode = form.get('device_code');
  if (deviceCode === null || deviceCode === '') return sendOAuthError(res, 400, 'invalid_request');
  const outcome = state.deviceCodes.poll(deviceCode, client);
  if (outcome.kind !== 'approved') return sendOAuthError(res, 400, outcome.kind);
  const { record } = outcome;
  const access = state.issueToken({
    client,
    ownerId: record.ownerId ?? null,
    scopes: record.scopes,
    grant: 'authorization_code',
  });
  respond(access, state.hasRefreshTokens ? state.refreshTokens.issue(access).token : undefined);
}
