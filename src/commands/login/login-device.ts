import type { AppContext } from '../../context.js';
import { deviceEndpointOf, deviceFlowUnavailable } from '../../signin/device-endpoint.js';
import { prepareSignIn, type SignInPlan } from '../../signin/sign-in-plan.js';
import { qrCodeOf, showDeviceCode } from '../../ui/device-code-view.js';
import type { Output } from '../../ui/output.js';
import { reportNewToken } from '../../ui/token-report.js';
import { formatInstant } from '../../ui/format.js';
import { profileFlag } from '../../settings/next-step.js';
import { startWaitIndicator } from '../../ui/wait-indicator.js';
import type { LoginOptions } from './login-options.js';

/** The wait for the approval as the terminal shows it (startWaitIndicator until `deadlineMs`, epoch ms). */
const approvalWait = (out: Output, ctx: AppContext) => (deadlineMs: number) =>
  startWaitIndicator(out, 'Waiting for the approval', deadlineMs, ctx.nowMs);

/**
 * Signs in on another device (signin/device-sign-in.ts, RFC 8628) with the terminal's ports: what
 * the code grants and where to enter it (showDeviceCode; the device code never), a wait indicator
 * until the approval, then the token reported (`--json`: `"flow": "device"`). Throws what
 * deviceSignIn throws.
 */
export async function signInOnDevice(
  plan: SignInPlan,
  endpoint: URL,
  options: LoginOptions,
  ctx: AppContext,
  out: Output,
): Promise<void> {
  const { deviceSignIn } = await import('../../signin/device-sign-in.js');
  const ports = {
    show: async (view: Parameters<typeof showDeviceCode>[1]) => {
      showDeviceCode(out, view);
      if (options.qr === true) out.instruct(await qrCodeOf(view.verificationUriComplete ?? view.verificationUri));
    },
    startWait: approvalWait(out, ctx),
    notices: out,
  };
  const signedIn = await deviceSignIn(plan, endpoint, ports, ctx);
  const headline = `Logged in to ${signedIn.baseUrl} (profile "${plan.profileName}") from another device`;
  reportNewToken(out, signedIn.token, plan.profileName, options.json === true, headline, {
    replaced: signedIn.replaced,
    flow: 'device',
  });
}

/**
 * `mmauth login --device`: the device authorization grant (RFC 8628) where the server offers it
 * (its metadata, or --device-authorization-url on the profile's origin). Throws
 * `device_flow_unavailable` where it offers none, and what signInOnDevice throws.
 */
export async function runDeviceLogin(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const plan = await (await prepareSignIn(options, ctx, out)).discover();
  const endpoint = deviceEndpointOf(plan);
  if (endpoint === undefined) throw deviceFlowUnavailable(plan);
  await signInOnDevice(plan, endpoint, options, ctx, out);
}

/**
 * `login --device --start`: the first of two device steps (startDeviceTwoStep: the code kept as the
 * profile's pending login, nothing polling); prints the code and where to enter it (--json:
 * `{user_code, verification_uri, verification_uri_complete, expires_at, interval, profile}`), then
 * what to run once it is entered.
 */
export async function runDeviceStart(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { startDeviceTwoStep } = await import('../../signin/device-two-step.js');
  const started = await startDeviceTwoStep(options, ctx, out);
  if (options.json === true) {
    out.json({
      user_code: started.userCode,
      verification_uri: started.verificationUri,
      verification_uri_complete: started.verificationUriComplete ?? null,
      expires_at: formatInstant(started.expiresAtMs),
      interval: started.intervalS,
      profile: started.profileName,
    });
  }
  showDeviceCode(out, started);
  if (options.qr === true) out.instruct(await qrCodeOf(started.verificationUriComplete ?? started.verificationUri));
  out.instruct(`Then run, before it expires:  mmauth login --complete${profileFlag(started.profileName)}`);
}

/**
 * `login --complete` after `login --device --start`: waits for the approval (completeDeviceTwoStep)
 * and reports the token as `login` does (`"flow": "device"`). Throws what it throws.
 */
export async function runDeviceComplete(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { completeDeviceTwoStep } = await import('../../signin/device-two-step.js');
  const ports = {
    startWait: approvalWait(out, ctx),
    notices: out,
  };
  const signedIn = await completeDeviceTwoStep({ ...options, waitS: options.wait }, ports, ctx);
  const headline = `Logged in to ${signedIn.baseUrl} (profile "${signedIn.profileName}") from another device`;
  reportNewToken(out, signedIn.token, signedIn.profileName, options.json === true, headline, {
    replaced: signedIn.replaced,
    flow: 'device',
  });
}
