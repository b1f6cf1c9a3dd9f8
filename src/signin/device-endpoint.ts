import { MmauthError } from '../errors.js';
import type { SignInPlan } from './sign-in-plan.js';

/**
 * The device authorization endpoint of `plan` (RFC 8628 §4): the one given or kept in the profile
 * (`--device-authorization-url`, `deviceAuthorizationUrl`), else the one the server's metadata
 * names; undefined where neither. Throws `usage` for a setting that is no absolute URL.
 */
export function deviceEndpointOf(plan: Pick<SignInPlan, 'deviceAuthorizationUrl' | 'served'>): URL | undefined {
  const given = plan.deviceAuthorizationUrl;
  if (given === undefined) return plan.served.endpoints.deviceAuthorization;
  if (!URL.canParse(given))
    throw new MmauthError('usage', `the device authorization URL "${given}" is not an absolute URL`);
  return new URL(given);
}

/** `device_flow_unavailable` for `plan`'s server: no device authorization endpoint named or set. */
export function deviceFlowUnavailable(plan: Pick<SignInPlan, 'served' | 'profileName'>): MmauthError {
  return new MmauthError(
    'device_flow_unavailable',
    `${plan.served.endpoints.baseUrl} names no device authorization endpoint in its metadata, and none is set for profile "${plan.profileName}"`,
  );
}
