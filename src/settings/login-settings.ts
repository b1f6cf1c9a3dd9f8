import type { AppContext } from '../context.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import type { Profile } from '../store/profile.js';
import { credentialsFor } from '../grant/credential-binding.js';
import type { ClientOptions, SecretOptions } from './setting-options.js';
import {
  DEFAULT_CALLBACK_PATH,
  parseCallbackPath,
  parseLoopbackRedirectUri,
  type LoopbackRedirect,
} from './redirect-uri.js';
import { chooseScope, findClientSecret, pickSetting, requireClientId } from './settings.js';
import { resolveTarget, type Target } from './target.js';
import { withServerMetadata } from './server-metadata-cache.js';
import { warnOfCallbackPathClash } from './callback-path-clash.js';
import type { CachedServerMetadata } from '../store/profile.js';

/** The options a browser login (one step or two) is configured by. */
export interface LoginSettingsOptions extends ClientOptions {
  scope?: string;
  redirectUri?: string;
  /** The path of the loopback redirect URI (default: the profile's, else /callback). */
  callbackPath?: string;
}

/** What an authorization request is built from: the target, client id, scope and a fixed redirect URI. */
export interface LoginSettings {
  target: Target;
  clientId: string;
  /** Space-separated (RFC 6749 §3.3). */
  scope: string;
  /** --redirect-uri or the profile's, when one is fixed; undefined: mmauth picks the port. */
  redirect: LoopbackRedirect | undefined;
  /**
   * The path the listener answers on (and the only one): the fixed redirect URI's, else
   * --callback-path or the profile's, else /callback. A response arriving at another path is refused.
   */
  callbackPath: string;
  /** The profile as this run may use its credentials (none of another server's: credentialsFor). */
  usable: Profile | undefined;
  /**
   * The client secret given to this login (findClientSecret's order), or undefined: a public client.
   * Read when the flow reaches it, once: --client-secret-stdin consumes stdin, which a login refused
   * earlier (a profile it may not replace) must leave alone.
   */
  clientSecret(): Promise<string | undefined>;
  /**
   * The target with the server's metadata (RFC 8414) applied, and that metadata for the login to
   * store (withServerMetadata); read when the flow reaches it, once, after the local checks: a login
   * refused before (another server, the keyring, a bad redirect URI) sends nothing.
   */
  discover(): Promise<Target & { serverMetadata: CachedServerMetadata | undefined }>;
}

/** `read` once, on the first call; later calls share its answer. */
function once<T>(read: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () => (answer ??= read());
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
  const callbackPath =
    redirect?.path ??
    parseCallbackPath(pickSetting(options.callbackPath, undefined, profile?.callbackPath) ?? DEFAULT_CALLBACK_PATH);
  const usable = credentialsFor(profile, target.endpoints.baseUrl, clientId);
  const clientSecret = once(() => findClientSecret(options, ctx, { ...target, profile: usable, clientId }));
  const discover = once(async () => {
    const served = await withServerMetadata(target, ctx);
    // Before the browser opens: another server's profile on this path, while either sends no iss (mix-up).
    const { serverMetadata } = served;
    const self = { name: target.profileName, baseUrl: served.endpoints.baseUrl, callbackPath, serverMetadata };
    warnOfCallbackPathClash(target.store, self, await ctx.output());
    return served;
  });
  return { target, clientId, scope, redirect, callbackPath, usable, clientSecret, discover };
}

/** What `login --complete` takes of its settings: those of the pending login it finishes. */
export interface CompletionSettings {
  /** A secret given to --complete, else the one given to --start (sealed with the pending login); as LoginSettings'. */
  clientSecret(): Promise<string | undefined>;
}

/**
 * The settings of `login --complete` (RFC 6749 §4.1.3): the client id, scope and redirect URI are
 * the pending login's, fixed at --start; only the client secret may be given again. Throws what
 * findClientSecret throws, when clientSecret() is called.
 */
export function resolveCompletionSettings(
  options: SecretOptions,
  ctx: AppContext,
  target: Target,
  pending: { clientId: string; clientSecret?: string | undefined },
): CompletionSettings {
  // A stored secret goes only with the client id it was stored for (attacks N20): the pending login's.
  const usable = credentialsFor(target.profile, target.endpoints.baseUrl, pending.clientId);
  const clientSecret = once(
    async () =>
      (await findClientSecret(options, ctx, { ...target, profile: usable, clientId: pending.clientId })) ??
      pending.clientSecret,
  );
  return { clientSecret };
}
