import type { AppContext } from '../context.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import type { CallbackPage } from '../loopback/pages.js';
import type { CallbackServer } from '../loopback/callback-server.js';
import { createAuthorizationRequest, type AuthorizationRequest } from '../oauth/authorization-code.js';
import type { TokenResponse } from '../oauth/parse.js';
import { toStoredToken } from '../grant/token-record.js';
import { credentialsFor } from '../grant/credential-binding.js';
import type { StoredToken } from '../store/profile.js';
import { DEFAULT_CALLBACK_PATH } from '../settings/redirect-uri.js';
import type { AuthorizationResponses } from './authorization-responses.js';
import { codeFlowJudge, type ResponseJudge } from './code-exchange.js';
import { probeBeforeWaiting } from './probe.js';
import { storeGrant, type ReplacedJson } from './replaced-grant.js';
import type { SignInPlan } from './sign-in-plan.js';

/** Lines for people a sign-in raises; a program's front end may drop them. */
export interface SignInNotices {
  info(line: string): void;
  warn(line: string): void;
}

/** The wait for the browser as a front end shows it: lines logged above its indicator, its end. */
export interface WaitView {
  /** Redirect addresses pasted by a person (paste-back), if this front end reads any. */
  pasted: AsyncIterable<string> | undefined;
  /** Prints a line without garbling the indicator. */
  log(print: () => void): void;
  /** Ends the indicator and stops reading pastes (idempotent). */
  stop(): void;
}

/**
 * What only a terminal or a program provides to a sign-in (the ports of the sign-in core):
 * showing the authorization URL and opening a browser, the wait's view, asking a secret.
 */
export interface SignInPorts {
  /**
   * Offers the authorization request to the resource owner: prints its URL, and/or opens a browser
   * at the listener's one-time start address (`listener.armStart(url)`; `disarmStart()` when none
   * opened), never putting `state` or the PKCE challenge in a process's argv.
   */
  offer(
    request: AuthorizationRequest,
    listener: Pick<CallbackServer, 'port' | 'armStart' | 'disarmStart'>,
  ): Promise<void>;
  /** Starts the wait's view (up to `deadlineMs`, epoch ms) once the request is offered. */
  startWait(redirectUri: string, deadlineMs: number): WaitView;
  /**
   * Asks a confidential client's secret when the server refused the exchange without one (a
   * terminal); absent: that refusal fails the sign-in (`token_endpoint_error`, reason
   * `confidential_client`).
   */
  askSecret?: (() => Promise<string>) | undefined;
  /** Shows each authorization response received, redacted (--verbose). */
  traceRedirect?: ((url: URL) => void) | undefined;
  notices: SignInNotices;
}

/** What a sign-in stored: the token, its profile and server, and what became of the grant it replaced. */
export interface SignedIn {
  token: StoredToken;
  profileName: string;
  /** The origin of the server the grant belongs to (RFC 6749 §10.3: the only place its tokens go). */
  baseUrl: string;
  replaced: ReplacedJson;
}

/**
 * The browser sign-in (RFC 8252; RFC 6749 §4.1 with PKCE S256 and `state`, or §4.2 for an implicit
 * plan), from a resolved `plan`: starts the loopback listener on the plan's callback path, builds
 * the authorization request, asks the authorization endpoint once first (`plan.probe`), offers it
 * (`ports.offer`), takes authorization responses until one yields a token (a `state` mismatch is
 * refused and waiting goes on), answers the browser's page, stores the grant in the profile
 * and ends the grant it replaced (storeGrant, keyring or file by the store's rules). The listener closes whatever happens. Throws `callback_timeout` after
 * `plan.waitS`, `interrupted`, `authorization_error`, `token_endpoint_error`, `state_mismatch`
 * never (refused, waited on), `iss_mismatch`, and what storing throws.
 */
export async function signIn(plan: SignInPlan, ports: SignInPorts, ctx: AppContext): Promise<SignedIn> {
  const { served, clientId, scope, redirect, callbackPath, isImplicit, profileName } = plan;
  const { endpoints } = served;
  const clientSecret = isImplicit ? undefined : plan.clientSecret;
  // Loaded here, not at start-up: the listener and the fragment check pull in node:http and node:crypto.
  const [{ startCallbackServer }, { waitForAuthorizationResponses }, implicit] = await Promise.all([
    import('../loopback/callback-server.js'),
    import('./authorization-responses.js'),
    import('../oauth/implicit.js'),
  ]);
  const listener = await startCallbackServer({
    port: redirect?.port ?? 0,
    path: callbackPath,
    isLocalhost: redirect?.isLocalhost === true,
    isFragmentRelay: isImplicit,
  });
  let view: WaitView | undefined;
  try {
    const redirectUri = redirect?.uri ?? listener.redirectUri;
    const request = await createAuthorizationRequest(
      endpoints,
      { clientId, redirectUri, scope, responseType: isImplicit ? 'token' : 'code' },
      ctx.random,
    );
    ctx.secrets.remember(request.codeVerifier);
    if (plan.probe) {
      const client = { clientId, clientSecret: clientSecret ?? plan.usable?.clientSecret };
      await probeBeforeWaiting(served.server, request, client, ports.notices);
    }
    await ports.offer(request, listener);
    const deadlineMs = ctx.nowMs() + plan.waitS * 1000;
    view = ports.startWait(redirectUri, deadlineMs);
    const shown = view;
    let askedSecret: string | undefined;
    const ask = ports.askSecret;
    const askSecret =
      ask === undefined
        ? undefined
        : async () => {
            shown.stop();
            ports.notices.warn(
              `${endpoints.baseUrl} refused the login without a client secret: ${clientId} is a confidential client`,
            );
            return (askedSecret = await ask());
          };
    const judge: ResponseJudge = isImplicit
      ? async (url) =>
          implicit.parseImplicitAuthorizationResponse(endpoints, implicit.implicitParameters(url), request.state)
      : codeFlowJudge(served.server, { clientId, clientSecret }, request, askSecret);
    const onRefused = (reason: string) =>
      shown.log(() => ports.notices.warn(`not accepted: ${reason}; still waiting for the redirect`));
    const responses = waitForAuthorizationResponses({
      listener,
      redirectUri,
      pasted: shown.pasted,
      timeoutMs: plan.waitS * 1000,
      signal: ctx.signal,
      onRefused,
    });
    let response: TokenResponse;
    try {
      const success = {
        isSuccess: true,
        title: 'Signed in',
        detail: `mmauth received an access token for ${endpoints.baseUrl}.`,
      };
      const trace =
        ports.traceRedirect === undefined ? undefined : (url: URL) => shown.log(() => ports.traceRedirect?.(url));
      response = await receiveToken(responses, judge, success, {
        onRefused,
        trace,
        scrub: (text) => ctx.secrets.scrub(text),
      }).catch((error: unknown) => {
        // The probe saw the sign-in page: the server took the request; the browser never came back.
        if (!hasErrorCode(error, 'callback_timeout') || !plan.probe) throw error;
        throw new MmauthError('callback_timeout', error.message, {
          cause: error,
          details: { ...error.details, probe: 'passed' },
        });
      });
    } finally {
      shown.stop();
    }
    const token = toStoredToken(response, isImplicit ? 'implicit' : 'authorization_code', ctx.nowMs(), scope);
    const destination = { store: plan.store, profileName, intent: plan.intent, baseUrl: endpoints.baseUrl };
    const replaced = await storeGrant(
      destination,
      token,
      (current) => ({
        baseUrl: endpoints.baseUrl,
        clientId,
        clientSecret:
          plan.clientSecret ?? askedSecret ?? credentialsFor(current, endpoints.baseUrl, clientId)?.clientSecret,
        scope,
        redirectUri: redirect?.uri,
        callbackPath: callbackPath === DEFAULT_CALLBACK_PATH ? undefined : callbackPath,
        serverMetadata: served.serverMetadata ?? current.serverMetadata,
      }),
      { ...plan.run, clientId, clientSecret: clientSecret ?? askedSecret },
      ctx,
      ports.notices,
    );
    return { token, profileName, baseUrl: endpoints.baseUrl, replaced };
  } finally {
    view?.stop();
    await listener.close();
  }
}

/**
 * Takes authorization responses until one yields a token: a `state_mismatch` is refused and
 * waiting goes on; any other failure is shown on the page and thrown; a token is answered with
 * `success`. The wait's bound covers the waiting only, never an exchange under way.
 */
async function receiveToken(
  responses: AuthorizationResponses,
  judge: ResponseJudge,
  success: CallbackPage,
  listeners: {
    onRefused(reason: string): void;
    trace: ((url: URL) => void) | undefined;
    /** What the browser's page may show of a failure: the run's secrets scrubbed. */
    scrub(text: string): string;
  },
): Promise<TokenResponse> {
  for (;;) {
    const incoming = await responses.next();
    listeners.trace?.(incoming.url);
    let token: TokenResponse;
    try {
      token = await judge(incoming.url);
    } catch (error) {
      if (hasErrorCode(error, 'state_mismatch')) {
        incoming.refuse(error.message);
        listeners.onRefused(error.message);
        continue;
      }
      const detail = listeners.scrub(error instanceof Error ? error.message : String(error));
      incoming.respond({ isSuccess: false, title: 'Sign-in failed', detail });
      throw error;
    }
    incoming.respond(success);
    return token;
  }
}
