import type { AppContext } from '../context.js';
import { assertMayStore } from '../grant/credential-binding.js';
import type { LoopbackRedirect } from '../settings/redirect-uri.js';
import { resolveLoginSettings, type LoginSettingsOptions } from '../settings/login-settings.js';
import type { Target } from '../settings/target.js';
import type { CachedServerMetadata, Profile } from '../store/profile.js';
import type { ProfileStore, WriteIntent } from '../store/profile-store.js';
import { prepareStoring, type StorageOptions } from './credential-storage.js';

/** What a browser sign-in is asked for, whoever asks (the `login` command, or `login()` in a program). */
export interface SignInOptions extends LoginSettingsOptions, StorageOptions {
  /** The implicit flow (RFC 6749 §4.2) instead of the code flow. */
  implicit?: boolean | undefined;
  /** Replace a token of a client grant or of another server in the profile. */
  replace?: boolean | undefined;
  /** Ask the authorization endpoint once before waiting. */
  probe: boolean;
  /** Seconds to wait for the browser to come back. */
  wait: number;
  /** Seconds, for each request. */
  timeout: number;
  /** The server's device authorization endpoint where its metadata names none (RFC 8628 §3.1); kept in the profile. */
  deviceAuthorizationUrl?: string | undefined;
}

/** Notices settling a sign-in may raise (the file fallback of credentials, a callback path shared). */
export interface PlanNotices {
  warn(line: string): void;
  instruct(line: string): void;
}

/** A sign-in's settings, resolved once: target, client, scope, redirect, storage; the server not yet asked. */
export interface SignInDraft {
  profileName: string;
  store: ProfileStore;
  clientId: string;
  /** Space-separated (RFC 6749 §3.3). */
  scope: string;
  /** A fixed loopback redirect URI; undefined: mmauth picks the port (RFC 8252 §7.3). */
  redirect: LoopbackRedirect | undefined;
  /** The path the listener answers on, and no other. */
  callbackPath: string;
  /** The profile as this sign-in may use its credentials (none of another server's). */
  usable: Profile | undefined;
  /** The client secret given (option, file, stdin, environment, or stored for this client); undefined: a public client. */
  clientSecret: string | undefined;
  isImplicit: boolean;
  probe: boolean;
  /** Seconds to wait for the browser (or, signing in on another device, for the approval). */
  waitS: number;
  /** The device authorization endpoint given (option) or kept (profile), where the metadata names none. */
  deviceAuthorizationUrl: string | undefined;
  /** How the grant is stored: keyring or file, checked before any request (prepareStoring). */
  intent: WriteIntent;
  /** Bounds and trace of the requests that end a replaced grant. */
  run: { timeout: number; verbose?: boolean };
  /** Reads the server's metadata (RFC 8414) once, after the local checks: the plan. */
  discover(): Promise<SignInPlan>;
}

/** A sign-in ready to run: the draft and the server as its metadata describes it. */
export interface SignInPlan extends Omit<SignInDraft, 'discover'> {
  served: Target & { serverMetadata: CachedServerMetadata | undefined };
}

/**
 * Resolves a sign-in's settings once (resolveLoginSettings: flags or options, the environment, the
 * profile, prompts where the context can prompt), checks the profile may take this grant
 * (assertMayStore: another server's or a client grant only with `replace`), checks where its
 * credentials will go (prepareStoring: a keyring that must take them and cannot fails now), and
 * reads the client secret. Nothing is sent to the server until `discover()`. Throws what those throw.
 */
export async function prepareSignIn(
  options: SignInOptions,
  ctx: AppContext,
  notices: PlanNotices,
): Promise<SignInDraft> {
  const settings = await resolveLoginSettings(options, ctx);
  const { target, clientId, scope, redirect, callbackPath, usable } = settings;
  const { profile, profileName } = target;
  const isImplicit = options.implicit === true;
  assertMayStore(
    profileName,
    profile,
    target.endpoints.baseUrl,
    isImplicit ? 'implicit' : 'authorization_code',
    options.replace === true,
  );
  const intent = await prepareStoring(options, target.store, profileName, notices);
  // No secret from any source: a public client (RFC 8252 §8.4), PKCE and client_id alone. A secret
  // given is stored (sealed) whatever the flow; the implicit flow never sends it.
  const clientSecret = await settings.clientSecret();
  const draft = {
    profileName,
    store: target.store,
    clientId,
    scope,
    redirect,
    callbackPath,
    usable,
    clientSecret,
    isImplicit,
    probe: options.probe,
    waitS: options.wait,
    deviceAuthorizationUrl: options.deviceAuthorizationUrl ?? usable?.deviceAuthorizationUrl,
    intent,
    run: { timeout: options.timeout, ...(options.verbose === undefined ? {} : { verbose: options.verbose }) },
  };
  return { ...draft, discover: async () => ({ ...draft, served: await settings.discover() }) };
}
