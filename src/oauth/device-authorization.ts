import { MmauthError, isMmauthError } from '../errors.js';
import type { TokenResponse } from './parse.js';
import {
  authorizationServer,
  clientAuthFor,
  loadOAuth,
  requestOptions,
  type ClientAuthentication,
  type ServerConfiguration,
} from './server-configuration.js';
import { describeOAuthFailure } from './describe-error.js';
import { validateTokenEndpointResponse } from './token-response.js';

/** RFC 8628 §3.4's grant type, sent at the token endpoint while polling. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** The polling interval when the server names none (RFC 8628 §3.2), in seconds. */
export const DEFAULT_INTERVAL_S = 5;
/** What every `slow_down` adds to the interval (RFC 8628 §3.5), in seconds. */
export const SLOW_DOWN_STEP_S = 5;

/** A device authorization (RFC 8628 §3.2): what the user is shown, and the device code that is never shown. */
export interface DeviceAuthorization {
  /** A secret of this run: sent only to the token endpoint, never printed. */
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  /** The address with the code in it, when the server gives one (§3.3.1). */
  verificationUriComplete: string | undefined;
  /** Seconds the codes live. */
  expiresInS: number;
  /** Seconds between polls (DEFAULT_INTERVAL_S when absent). */
  intervalS: number;
}

/** What one poll of the token endpoint learned (RFC 8628 §3.5). */
export type DevicePoll =
  { kind: 'token'; token: TokenResponse } | { kind: 'authorization_pending' } | { kind: 'slow_down' };

/**
 * Asks the device authorization endpoint `endpoint` (RFC 8628 §3.1: `client_id`, `scope`, and the
 * client's authentication for a confidential client, spec §5.3) for a device code and a user code,
 * through oauth4webapi. The endpoint must be on the origin of `server.endpoints.baseUrl` (credentials
 * go nowhere else). Throws `base_url_mismatch` for another origin, `token_endpoint_error` for an
 * OAuth error answer (`invalid_client`, `invalid_scope`, `unauthorized_client`), `malformed_response`,
 * and network errors.
 */
export async function requestDeviceAuthorization(
  server: ServerConfiguration,
  client: ClientAuthentication,
  endpoint: URL,
  scope: string,
): Promise<DeviceAuthorization> {
  const origin = new URL(server.endpoints.baseUrl).origin;
  if (endpoint.origin !== origin) {
    throw new MmauthError(
      'base_url_mismatch',
      `the device authorization endpoint ${endpoint.href} is not on ${origin}: mmauth sends a client's credentials only to its server's origin`,
    );
  }
  const lib = await loadOAuth();
  const as = { ...authorizationServer(server.endpoints), device_authorization_endpoint: endpoint.href };
  const [oauthClient, auth] = clientAuthFor(lib, client);
  const response = await lib.deviceAuthorizationRequest(as, oauthClient, auth, { scope }, requestOptions(lib, server));
  let answer: Awaited<ReturnType<typeof lib.processDeviceAuthorizationResponse>>;
  try {
    answer = await lib.processDeviceAuthorizationResponse(as, oauthClient, response);
  } catch (failure) {
    throw await describeOAuthFailure(lib, 'token_endpoint_error', 'the device authorization endpoint', failure);
  }
  return {
    deviceCode: answer.device_code,
    userCode: answer.user_code,
    verificationUri: answer.verification_uri,
    verificationUriComplete: answer.verification_uri_complete,
    expiresInS: answer.expires_in,
    intervalS: answer.interval ?? DEFAULT_INTERVAL_S,
  };
}

/**
 * One poll of the token endpoint with the device code (RFC 8628 §3.4: grant_type
 * `urn:ietf:params:oauth:grant-type:device_code`, the client's authentication): the token, or
 * `authorization_pending` / `slow_down` (§3.5). Throws `device_access_denied` (the user denied,
 * `access_denied`), `device_code_expired` (`expired_token`), `token_endpoint_error` for any other
 * OAuth error, `malformed_response`, and network errors.
 */
export async function pollDeviceToken(
  server: ServerConfiguration,
  client: ClientAuthentication,
  deviceCode: string,
): Promise<DevicePoll> {
  const lib = await loadOAuth();
  const as = authorizationServer(server.endpoints);
  const [oauthClient, auth] = clientAuthFor(lib, client);
  try {
    const response = await lib.deviceCodeGrantRequest(as, oauthClient, auth, deviceCode, requestOptions(lib, server));
    const token = await validateTokenEndpointResponse(lib, response, (r) =>
      lib.processDeviceCodeResponse(as, oauthClient, r),
    );
    return { kind: 'token', token };
  } catch (error) {
    const oauthError = isMmauthError(error) && error.code === 'token_endpoint_error' ? error.oauthError : undefined;
    if (oauthError === 'authorization_pending') return { kind: 'authorization_pending' };
    if (oauthError === 'slow_down') return { kind: 'slow_down' };
    if (oauthError === 'access_denied') {
      throw new MmauthError('device_access_denied', 'the sign-in was denied on the verification page', {
        cause: error,
        oauthError,
      });
    }
    if (oauthError === 'expired_token') {
      throw new MmauthError('device_code_expired', 'the code expired before anyone approved it', {
        cause: error,
        oauthError,
      });
    }
    throw error;
  }
}
