import type { AppContext } from '../context.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import type { Profile } from '../store/profile.js';
import { credentialsFor } from '../grant/credential-binding.js';
import type { ClientOptions } from './setting-options.js';
import { parseLoopbackRedirectUri, type LoopbackRedirect } from './redirect-uri.js';
import { chooseScope, pickSetting, requireClientId } from './settings.js';
import { resolveTarget, type Target } from './target.js';

/** The options a browser login (one step or two) is configured by. */
export interface LoginSettingsOptions extends ClientOptions {
  scope?: string;
  redirectUri?: string;
}

/** What an authorization request is built from: the target, client id, scope and a fixed redirect URI. */
export interface LoginSettings {
  target: Target;
  clientId: string;
  /** Space-separated (RFC 6749 §3.3). */
  scope: string;
  /** --redirect-uri or the profile's, when one is fixed; undefined: mmauth picks the port. */
  redirect: LoopbackRedirect | undefined;
  /** The profile as this run may use its credentials (none of another server's: credentialsFor). */
  usable: Profile | undefined;
}

/**
 * The settings of a browser login, in prompt order: target (base URL), client id, scope (a
 * checkbox on a terminal), and the fixed redirect URI (RFC 8252 §7.3). Throws what resolveTarget,
 * requireClientId, chooseScope and parseLoopbackRedirectUri throw.
 */
export async function resolveLoginSettings(options: LoginSettingsOptions, ctx: AppContext): Promise<LoginSettings> {
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { profile } = target;
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const scope = await chooseScope(options.scope, profile, DEFAULT_SCOPE, ctx);
  const fixed = pickSetting(options.redirectUri, undefined, profile?.redirectUri);
  const redirect = fixed === undefined ? undefined : parseLoopbackRedirectUri(fixed);
  return { target, clientId, scope, redirect, usable: credentialsFor(profile, target.endpoints.baseUrl, clientId) };
}
