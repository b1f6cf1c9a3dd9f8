import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { assertPublicClient } from '../signin/client-check.js';
import { prepareSignIn } from '../signin/sign-in-plan.js';
import { signIn, type SignInPorts } from '../signin/sign-in.js';
import { forgetProfileCredentials, logOutProfile } from '../signin/sign-out.js';
import { toToken, type Token } from './get-token.js';
import { createLibraryContext } from './library-context.js';
import { toLibraryError } from './library-errors.js';

/** Options of `login`: what `mmauth login` takes as flags, and how to open the browser. */
export interface LoginOptions {
  /** The profile to sign in (default as the CLI selects one: MMAUTH_PROFILE, the approved directory file, `profile use`, `default`). */
  profile?: string;
  /** The service's base URL (default: the profile's, or MMAUTH_BASE_URL); https unless loopback. */
  baseUrl?: string;
  /** The OAuth client id (default: the profile's, or MMAUTH_CLIENT_ID). */
  clientId?: string;
  /** Space-separated scopes (RFC 6749 §3.3; default: the profile's, else `service`). */
  scope?: string;
  /** A confidential client's secret (default: MMAUTH_CLIENT_SECRET, or the profile's for this client). */
  clientSecret?: string;
  /** A fixed loopback redirect URI, as registered (default: 127.0.0.1, any free port, the profile's callback path). */
  redirectUri?: string;
  /**
   * Opens `url` (a one-time address on 127.0.0.1 that sends the browser on to the authorization
   * page) for the resource owner: an editor's `openExternal`, Electron's `shell.openExternal`.
   * Default: the system browser (the `open` package, loaded only then). A rejection ends the login.
   */
  openBrowser?: (url: string) => unknown;
  /** Ends the wait for the browser (the call rejects with `interrupted`; nothing is stored). */
  signal?: AbortSignal;
  /** Seconds to wait for the browser to come back (default 300). */
  wait?: number;
  /** Environment variables read instead of the process's (MMAUTH_CONFIG_DIR, MMAUTH_CLIENT_SECRET, …). */
  env?: NodeJS.ProcessEnv;
  /**
   * `device`: sign in from another device (RFC 8628 device authorization grant) where the server
   * offers it; `onDeviceCode` then shows the code. Default `browser` (the code flow on a loopback listener).
   */
  flow?: 'browser' | 'device';
  /** With `flow: 'device'`: shows the user the code and where to enter it (required then). A rejection ends the login. */
  onDeviceCode?: (code: DeviceCode) => unknown;
  /** The server's device authorization endpoint where its metadata names none (kept in the profile). */
  deviceAuthorizationUrl?: string;
}

/** What a device sign-in shows the user (RFC 8628 §3.2): never the device code, a secret of the sign-in. */
export interface DeviceCode {
  /** The code the user enters, e.g. `BCDF-GHJK`. */
  readonly userCode: string;
  /** Where the user enters it, on any device. */
  readonly verificationUri: string;
  /** The address with the code in it (a QR code's content), or null when the server gives none. */
  readonly verificationUriComplete: string | null;
  /** When the code expires. */
  readonly expiresAt: Date;
  /** Seconds between polls, as the server asked. */
  readonly interval: number;
  /** The client, scopes (space-separated) and host the code signs in: say them before the code. */
  readonly clientId: string;
  readonly scope: string;
  readonly host: string;
}

/** A program's sign-in says nothing: notices go nowhere. */
const SILENT = { info: () => undefined, warn: () => undefined, instruct: () => undefined };

/** The default opener: the system browser, `open` loaded on first use only. */
async function systemBrowser(url: string): Promise<void> {
  const { openSystemBrowser } = await import('../browser/open-browser.js');
  await openSystemBrowser(url);
}

/** What only a program provides to a sign-in: its browser opener; no printing, no paste, no prompt. */
function programPorts(openBrowser: (url: string) => unknown): SignInPorts {
  return {
    offer: async (request, listener) => {
      const startUrl = listener.armStart(request.url.href);
      try {
        await openBrowser(startUrl);
      } catch (error) {
        listener.disarmStart();
        const why = error instanceof Error ? error.message : String(error);
        throw new MmauthError('no_browser', `the browser could not be opened: ${why}`, { cause: error });
      }
    },
    startWait: () => ({ pasted: undefined, log: (print) => print(), stop: () => undefined }),
    notices: SILENT,
  };
}

/**
 * Signs the user in as `mmauth login` does and returns the new token (getToken's `Token`): the
 * authorization code flow with PKCE S256 and `state` on a loopback listener (RFC 8252; RFC 6749
 * §4.1; RFC 9207 `iss` checked where the server sends it; the listener's one-time start address,
 * peer check and the profile's callback path), the grant stored in the profile exactly as the
 * command line stores it (keyring or file by the same rules; the grant it replaces ended). Never
 * prompts, never prints. With no client secret, the token endpoint is asked first whether the
 * client is public (assertPublicClient): a confidential one fails before any browser opens.
 * With `flow: 'device'`, the device authorization grant (RFC 8628) instead: `onDeviceCode` shows
 * the code, and the terminal-free sign-in ends as `mmauth login --device` does
 * (`device_flow_unavailable`, `device_access_denied`, `device_code_expired`).
 * Rejects with MmauthErrors (exitCode as the CLI's): `client_secret_required`, `no_client_id`,
 * `no_base_url`, `no_browser` (the opener failed), `callback_timeout` (after `wait`),
 * `interrupted` (`signal`), `authorization_error`, `token_endpoint_error`, `iss_mismatch`, and the
 * store's errors.
 */
export async function login(options: LoginOptions = {}): Promise<Token> {
  const secret = options.clientSecret === undefined ? {} : { MMAUTH_CLIENT_SECRET: options.clientSecret };
  // Ends the sign-in on the caller's signal, or when a device sign-in's onDeviceCode rejects.
  const ended = new AbortController();
  const ctx: AppContext = createLibraryContext(
    { ...options.env, ...secret },
    options.signal === undefined ? ended.signal : AbortSignal.any([options.signal, ended.signal]),
  );
  try {
    const draft = await prepareSignIn(
      {
        ...(options.profile === undefined ? {} : { profile: options.profile }),
        ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
        ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
        ...(options.scope === undefined ? {} : { scope: options.scope }),
        ...(options.redirectUri === undefined ? {} : { redirectUri: options.redirectUri }),
        ...(options.deviceAuthorizationUrl === undefined
          ? {}
          : { deviceAuthorizationUrl: options.deviceAuthorizationUrl }),
        probe: true,
        wait: options.wait ?? 300,
        timeout: 30,
      },
      ctx,
      SILENT,
    );
    if (options.flow === 'device') return await deviceLogin(draft, options, ctx, ended);
    // No opener given and none the system can start (CI, SSH, no display): say so now, not after `wait`.
    if (options.openBrowser === undefined && !process.env.BROWSER) {
      const { reasonNotToOpen } = await import('../browser/open-browser.js');
      const reason = reasonNotToOpen(process.env, process.platform);
      if (reason !== undefined) {
        throw new MmauthError('no_browser', `no browser can be opened here: ${reason}`, {
          hint: "pass login()'s openBrowser option to show the address another way (an editor's openExternal, a message to the user)",
        });
      }
    }
    const plan = await draft.discover();
    if (plan.clientSecret === undefined) {
      const redirectUri = plan.redirect?.uri ?? `http://127.0.0.1${plan.callbackPath}`;
      await assertPublicClient(plan.served.server, plan.clientId, redirectUri, plan.scope);
    }
    const signedIn = await signIn(plan, programPorts(options.openBrowser ?? systemBrowser), ctx);
    return toToken(signedIn.token, signedIn.token.accessToken, signedIn.profileName, signedIn.baseUrl);
  } catch (error) {
    throw toLibraryError(error, ctx.secrets);
  }
}

/**
 * `login()` with `flow: 'device'` (RFC 8628): the device sign-in (signin/device-sign-in.ts) with
 * `onDeviceCode` showing the code; the grant stored as `mmauth login --device` stores it. Throws
 * `usage` without `onDeviceCode`, `device_flow_unavailable`, and what deviceSignIn throws.
 */
async function deviceLogin(
  draft: Awaited<ReturnType<typeof prepareSignIn>>,
  options: LoginOptions,
  ctx: AppContext,
  ended: AbortController,
): Promise<Token> {
  const show = options.onDeviceCode;
  if (show === undefined)
    throw new MmauthError('usage', "login() with flow 'device' needs onDeviceCode to show the code");
  const plan = await draft.discover();
  const [{ deviceEndpointOf, deviceFlowUnavailable }, { deviceSignIn }] = await Promise.all([
    import('../signin/device-endpoint.js'),
    import('../signin/device-sign-in.js'),
  ]);
  const endpoint = deviceEndpointOf(plan);
  if (endpoint === undefined) throw deviceFlowUnavailable(plan);
  // A callback that rejects ends the sign-in with its error: polling stops, nothing is stored.
  let failShown: (error: unknown) => void = () => undefined;
  const showFailed = new Promise<never>((_, reject) => {
    failShown = reject;
  });
  showFailed.catch(() => undefined);
  const ports = {
    show: (view: Parameters<Parameters<typeof deviceSignIn>[2]['show']>[0]) => {
      const code: DeviceCode = Object.freeze({
        userCode: view.userCode,
        verificationUri: view.verificationUri,
        verificationUriComplete: view.verificationUriComplete ?? null,
        expiresAt: new Date(view.expiresAtMs),
        interval: view.intervalS,
        clientId: view.clientId,
        scope: view.scope,
        host: view.host,
      });
      Promise.resolve()
        .then(() => show(code))
        .catch((error: unknown) => {
          failShown(error);
          ended.abort();
        });
    },
    startWait: () => ({ stop: () => undefined }),
    notices: SILENT,
  };
  const signedIn = await Promise.race([deviceSignIn(plan, endpoint, ports, ctx), showFailed]);
  return toToken(signedIn.token, signedIn.token.accessToken, signedIn.profileName, signedIn.baseUrl);
}

/** What `logout` ended. */
export interface LogoutResult {
  /** The profile logged out. */
  readonly profile: string;
  /** Whether it held anything to forget (a token, a secret, or tokens it had replaced). */
  readonly loggedOut: boolean;
  /** Whether the server revoked the grant (RFC 7009), and confirmed it (token info refuses it since). */
  readonly revoked: boolean;
  readonly confirmed: boolean;
  /** The server no longer knew the token: nothing was live. */
  readonly alreadyInvalid: boolean;
  /** How many earlier tokens mmauth had replaced without ending were revoked now. */
  readonly replacedRevoked: number;
}

/**
 * Ends the profile's grant as `mmauth logout` does: revoked on the server and confirmed (RFC 7009;
 * its refresh token too, and the tokens mmauth replaced without ending), then its credentials
 * forgotten (token, refresh token, client secret); its settings stay. A personal access token is
 * only forgotten (the server cannot revoke it this way). Returns what was ended. Rejects with
 * `unknown_profile`, network and server errors (keeping everything: nothing is forgotten unrevoked).
 */
export async function logout(options: { profile?: string; env?: NodeJS.ProcessEnv } = {}): Promise<LogoutResult> {
  const ctx = createLibraryContext(options.env ?? {}, new AbortController().signal);
  try {
    const profile = options.profile === undefined ? {} : { profile: options.profile };
    const result = await logOutProfile({ ...profile, timeout: 30 }, ctx, forgetProfileCredentials);
    return Object.freeze({
      profile: result.profile,
      loggedOut: result.logged_out,
      revoked: result.revoked,
      confirmed: result.confirmed,
      alreadyInvalid: result.already_invalid,
      replacedRevoked: result.replaced_revoked,
    });
  } catch (error) {
    throw toLibraryError(error, ctx.secrets);
  }
}
