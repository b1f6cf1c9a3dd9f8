import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { requestDeviceAuthorization } from '../oauth/device-authorization.js';
import { resolveCompletionSettings } from '../settings/login-settings.js';
import type { ClientOptions } from '../settings/setting-options.js';
import { requireProfile, resolveTarget } from '../settings/target.js';
import { prepareStoring, type StorageOptions } from './credential-storage.js';
import { deviceEndpointOf, deviceFlowUnavailable } from './device-endpoint.js';
import {
  grantViewOf,
  pollForGrant,
  storeDeviceGrant,
  type DeviceGrantView,
  type DeviceSignInPorts,
} from './device-sign-in.js';
import type { SignedIn } from './sign-in.js';
import { prepareSignIn, type PlanNotices, type SignInOptions } from './sign-in-plan.js';
import type { SignInNotices } from './sign-in.js';

/** What `login --device --start` shows and stores: the code, where to enter it, until when. */
export interface StartedDeviceSignIn extends DeviceGrantView {
  profileName: string;
}

/**
 * The first of two device steps (`login --device --start`, RFC 8628 §3.1–3.2): asks the server's
 * device authorization endpoint (its metadata, or the profile's setting on its origin) for a code,
 * and keeps it as the profile's pending login (the device code sealed like a secret, never shown;
 * a newer pending login replaces it). Nothing polls until `--complete`. Returns what to show.
 * Throws `device_flow_unavailable`, `base_url_mismatch`, `token_endpoint_error`, and what the
 * settings and the store throw.
 */
export async function startDeviceTwoStep(
  options: SignInOptions,
  ctx: AppContext,
  notices: PlanNotices & SignInNotices,
): Promise<StartedDeviceSignIn> {
  const plan = await (await prepareSignIn(options, ctx, notices)).discover();
  const endpoint = deviceEndpointOf(plan);
  if (endpoint === undefined) throw deviceFlowUnavailable(plan);
  const { clientId, scope, profileName } = plan;
  const { endpoints, server, serverMetadata } = plan.served;
  const authorization = await requestDeviceAuthorization(
    server,
    { clientId, clientSecret: plan.clientSecret },
    endpoint,
    scope,
  );
  ctx.secrets.remember(authorization.deviceCode);
  const expiresAtMs = ctx.nowMs() + authorization.expiresInS * 1000;
  // A secret given now (not the stored one) goes with the pending login, sealed like the device code.
  const givenSecret = plan.clientSecret !== plan.usable?.clientSecret ? plan.clientSecret : undefined;
  await plan.store.update(
    profileName,
    (current) => ({
      ...current,
      baseUrl: current.baseUrl ?? endpoints.baseUrl,
      serverMetadata: serverMetadata ?? current.serverMetadata,
      deviceAuthorizationUrl: plan.deviceAuthorizationUrl ?? current.deviceAuthorizationUrl,
      pendingLogin: {
        url: endpoint.href,
        state: authorization.userCode,
        codeVerifier: authorization.deviceCode,
        redirectUri: authorization.verificationUri,
        responseType: 'device',
        clientId,
        clientSecret: givenSecret,
        scope,
        expiresAt: new Date(expiresAtMs).toISOString(),
        deviceIntervalS: authorization.intervalS,
      },
    }),
    plan.intent,
  );
  return { profileName, ...grantViewOf(plan, authorization, expiresAtMs) };
}

/**
 * The second device step (`login --complete` after `login --device --start`): polls with the
 * pending device code (pollForGrant, bounded by the code's expiry and `waitS`) and stores the grant
 * as the one-step device sign-in does, clearing the pending login. Throws `pending_login_missing`
 * (none, or not a device login), `pending_login_expired`, `base_url_mismatch` (the profile now
 * points elsewhere), and what pollForGrant and storing throw.
 */
export async function completeDeviceTwoStep(
  options: ClientOptions & StorageOptions & { timeout: number; waitS: number },
  ports: Pick<DeviceSignInPorts, 'startWait' | 'notices'> & { notices: PlanNotices },
  ctx: AppContext,
): Promise<SignedIn> {
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profileName } = target;
  const pending = requireProfile(target).pendingLogin;
  if (pending?.responseType !== 'device') {
    throw new MmauthError('pending_login_missing', `profile "${profileName}" has no device login waiting`, {
      details: { profile: profileName },
    });
  }
  const expiresAtMs = Date.parse(pending.expiresAt);
  if (expiresAtMs <= ctx.nowMs()) {
    await target.store.update(profileName, (current) => ({ ...current, pendingLogin: undefined }));
    throw new MmauthError('pending_login_expired', `the device login started for profile "${profileName}" expired`, {
      details: { expiresAt: pending.expiresAt, profile: profileName },
    });
  }
  // The device code goes only to the server the login started at.
  if (new URL(pending.url).origin !== new URL(endpoints.baseUrl).origin) {
    throw new MmauthError(
      'base_url_mismatch',
      `the device login of profile "${profileName}" was started at ${new URL(pending.url).origin}; refusing to complete it at ${endpoints.baseUrl}`,
    );
  }
  const intent = await prepareStoring(options, target.store, profileName, ports.notices);
  const clientSecret =
    pending.clientSecret ?? (await resolveCompletionSettings(options, ctx, target, pending).clientSecret());
  const client = { clientId: pending.clientId, clientSecret };
  ctx.secrets.remember(pending.codeVerifier);
  const polling = {
    deviceCode: pending.codeVerifier,
    intervalS: pending.deviceIntervalS ?? 5,
    expiresAtMs,
    deadlineMs: Math.min(expiresAtMs, ctx.nowMs() + options.waitS * 1000),
    waitS: options.waitS,
    timeoutS: options.timeout,
  };
  const response = await pollForGrant(target.server, client, polling, ports, ctx);
  const plan = {
    served: { ...target, serverMetadata: undefined },
    clientId: pending.clientId,
    clientSecret,
    scope: pending.scope,
    profileName,
    store: target.store,
    intent,
    run: { timeout: options.timeout },
  };
  return storeDeviceGrant(plan, response, ports.notices, ctx);
}
