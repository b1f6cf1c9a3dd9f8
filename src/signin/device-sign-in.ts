import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { credentialsFor } from '../grant/credential-binding.js';
import { trackRenewal } from '../grant/renewals-in-flight.js';
import { toStoredToken } from '../grant/token-record.js';
import {
  pollDeviceToken,
  requestDeviceAuthorization,
  SLOW_DOWN_STEP_S,
  type DeviceAuthorization,
  type DevicePoll,
} from '../oauth/device-authorization.js';
import { requestRevocation } from '../oauth/revocation.js';
import type { TokenResponse } from '../oauth/parse.js';
import { DEFAULT_CALLBACK_PATH } from '../settings/redirect-uri.js';
import { storeGrant } from './replaced-grant.js';
import type { SignedIn, SignInNotices } from './sign-in.js';
import type { SignInPlan } from './sign-in-plan.js';
import type { DeviceCodeShown } from '../ui/device-code-view.js';

/** What a device sign-in shows the user (DeviceCodeShown: what the code grants, where to enter it) and its poll interval. */
export interface DeviceGrantView extends DeviceCodeShown {
  /** Seconds between polls, as the server asked. */
  intervalS: number;
}

/**
 * What the user is shown of `authorization` (never its device code), for `plan`'s client, scope
 * and host, the code expiring at `expiresAtMs` (epoch ms).
 */
export function grantViewOf(
  plan: Pick<SignInPlan, 'clientId' | 'scope' | 'served'>,
  authorization: DeviceAuthorization,
  expiresAtMs: number,
): DeviceGrantView {
  return {
    clientId: plan.clientId,
    scope: plan.scope,
    host: new URL(plan.served.endpoints.baseUrl).host,
    userCode: authorization.userCode,
    verificationUri: authorization.verificationUri,
    verificationUriComplete: authorization.verificationUriComplete,
    expiresAtMs,
    intervalS: authorization.intervalS,
  };
}

/** What a front end gives a device sign-in: the code shown (never the device code), the wait shown. */
export interface DeviceSignInPorts {
  show(view: DeviceGrantView): void | Promise<void>;
  /** Starts showing the wait until `deadlineMs` (epoch ms); stop() ends it. */
  startWait(deadlineMs: number): { stop(): void };
  notices: SignInNotices;
}

/** Waits `ms`, or until `signal` aborts: then throws `interrupted` (nothing is in flight then). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new MmauthError('interrupted', 'interrupted'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new MmauthError('interrupted', 'interrupted'));
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** What polling needs of a device authorization: its device code, interval and when to stop (epoch ms). */
export interface DevicePolling {
  deviceCode: string;
  intervalS: number;
  /** When the code expires. */
  expiresAtMs: number;
  /** When the wait ends: the code's expiry or the caller's bound, whichever comes first. */
  deadlineMs: number;
  /** The caller's bound in seconds, named when it ends the wait. */
  waitS: number;
  /** Seconds, for each poll's request. */
  timeoutS: number;
}

/**
 * Polls the token endpoint with the device code (RFC 8628 §3.4) every `intervalS` seconds, 5 s more
 * after each `slow_down` (§3.5), until a token, a denial (`device_access_denied`), the deadline
 * (`device_code_expired`: the code's expiry, or `--wait`), or Ctrl-C (`interrupted`; a poll already
 * sent is waited for, and a token it brings is revoked, never left live). Returns the token response.
 */
export async function pollForGrant(
  server: SignInPlan['served']['server'],
  client: { clientId: string; clientSecret: string | undefined },
  polling: DevicePolling,
  ports: Pick<DeviceSignInPorts, 'startWait' | 'notices'>,
  ctx: AppContext,
): Promise<TokenResponse> {
  const { deadlineMs, expiresAtMs } = polling;
  // A poll sent is never cut off by Ctrl-C (what it mints must be ended), nor the revocation after it.
  const sent = { ...server, fetch: ctx.http(polling.timeoutS * 1000, undefined, { isUninterruptible: true }).fetch };
  const wait = ports.startWait(deadlineMs);
  try {
    let intervalS = polling.intervalS;
    for (;;) {
      if (ctx.nowMs() + intervalS * 1000 > deadlineMs) {
        await pause(Math.max(0, deadlineMs - ctx.nowMs()), ctx.signal);
        const why = deadlineMs < expiresAtMs ? `--wait ${polling.waitS} s passed` : 'the code expired';
        throw new MmauthError('device_code_expired', `${why} before anyone approved the sign-in`);
      }
      await pause(intervalS * 1000, ctx.signal);
      // Sent: waited for whatever comes (a second Ctrl-C too), and a token after Ctrl-C is ended.
      const poll: DevicePoll = await trackRenewal(pollDeviceToken(sent, client, polling.deviceCode));
      if (poll.kind === 'token') {
        ctx.secrets.remember(poll.token.accessToken);
        if (poll.token.refreshToken !== undefined) ctx.secrets.remember(poll.token.refreshToken);
        if (ctx.signal.aborted) {
          await endUnwanted(sent, client, poll.token, ports.notices);
          throw new MmauthError('interrupted', 'interrupted');
        }
        return poll.token;
      }
      if (poll.kind === 'slow_down') intervalS += SLOW_DOWN_STEP_S;
    }
  } finally {
    wait.stop();
  }
}

/**
 * The device sign-in (RFC 8628) from a resolved `plan`, with `endpoint` the server's device
 * authorization endpoint: asks it for a code (§3.1, the client's authentication for a confidential
 * client), shows the user code and verification address (ports.show; the device code never), then
 * polls (pollForGrant) until `plan.waitS` at most. The token is stored as a code-flow grant
 * (renewable, ended by logout) with `viaDevice`, and the grant it replaced ended (storeGrant).
 * Throws what pollForGrant throws, `base_url_mismatch` for an endpoint off the base URL's origin,
 * `token_endpoint_error`, and what storing throws.
 */
export async function deviceSignIn(
  plan: SignInPlan,
  endpoint: URL,
  ports: DeviceSignInPorts,
  ctx: AppContext,
): Promise<SignedIn> {
  const { served, clientId, scope } = plan;
  const { server } = served;
  const client = { clientId, clientSecret: plan.clientSecret };
  const authorization: DeviceAuthorization = await requestDeviceAuthorization(server, client, endpoint, scope);
  ctx.secrets.remember(authorization.deviceCode);
  const expiresAtMs = ctx.nowMs() + authorization.expiresInS * 1000;
  const deadlineMs = Math.min(expiresAtMs, ctx.nowMs() + plan.waitS * 1000);
  await ports.show(grantViewOf(plan, authorization, expiresAtMs));
  const polling = { ...authorization, expiresAtMs, deadlineMs, waitS: plan.waitS, timeoutS: plan.run.timeout };
  const response = await pollForGrant(server, client, polling, ports, ctx);
  return storeDeviceGrant(plan, response, ports.notices, ctx);
}

/**
 * Stores what a device sign-in brought as `plan`'s profile's grant: a code-flow grant marked
 * `viaDevice`, the profile bound to the server and client, the pending login cleared, the grant it
 * replaced ended (storeGrant). Throws what storing throws.
 */
export async function storeDeviceGrant(
  plan: Pick<
    SignInPlan,
    'served' | 'clientId' | 'clientSecret' | 'scope' | 'profileName' | 'store' | 'intent' | 'run'
  > &
    Partial<Pick<SignInPlan, 'redirect' | 'callbackPath' | 'deviceAuthorizationUrl'>>,
  response: TokenResponse,
  notices: SignInNotices,
  ctx: AppContext,
): Promise<SignedIn> {
  const { served, clientId, scope, profileName } = plan;
  const { endpoints } = served;
  const token = { ...toStoredToken(response, 'authorization_code', ctx.nowMs(), scope), viaDevice: true };
  const destination = { store: plan.store, profileName, intent: plan.intent, baseUrl: endpoints.baseUrl };
  const replaced = await storeGrant(
    destination,
    token,
    (current) => ({
      baseUrl: endpoints.baseUrl,
      clientId,
      clientSecret: plan.clientSecret ?? credentialsFor(current, endpoints.baseUrl, clientId)?.clientSecret,
      scope,
      ...(plan.redirect === undefined ? {} : { redirectUri: plan.redirect.uri }),
      ...(plan.callbackPath === undefined || plan.callbackPath === DEFAULT_CALLBACK_PATH
        ? {}
        : { callbackPath: plan.callbackPath }),
      serverMetadata: served.serverMetadata ?? current.serverMetadata,
      deviceAuthorizationUrl: plan.deviceAuthorizationUrl ?? current.deviceAuthorizationUrl,
      pendingLogin: undefined,
    }),
    { ...plan.run, clientId, clientSecret: plan.clientSecret },
    ctx,
    notices,
  );
  return { token, profileName, baseUrl: endpoints.baseUrl, replaced };
}

/** Revokes a pair minted after the user gave up (RFC 7009): the refresh token first, then the access token. */
async function endUnwanted(
  server: SignInPlan['served']['server'],
  client: { clientId: string; clientSecret: string | undefined },
  token: TokenResponse,
  notices: SignInNotices,
): Promise<void> {
  try {
    if (token.refreshToken !== undefined) await requestRevocation(server, client, token.refreshToken, 'refresh_token');
    await requestRevocation(server, client, token.accessToken, 'access_token');
    notices.warn('interrupted: the sign-in approved meanwhile was revoked at once');
  } catch (error) {
    notices.warn(
      `interrupted: the sign-in approved meanwhile could not be revoked (${error instanceof Error ? error.message : String(error)}); it expires on its own`,
    );
  }
}
