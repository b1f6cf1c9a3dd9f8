import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import { isCi } from '../../ui/prompts.js';
import { redactUrl, SecretScrubber } from '../../http/redact.js';
import type { CallbackPage } from '../../loopback/pages.js';
import { createAuthorizationRequest } from '../../oauth/authorization-code.js';
import type { TokenResponse } from '../../oauth/parse.js';
import type { AuthorizationResponses } from '../../ui/authorization-responses.js';
import { reportToken } from '../../ui/token-report.js';
import { endReplacedGrant, storeNewGrant } from './replaced-grant.js';
import { startWaitIndicator } from '../../ui/wait-indicator.js';
import type { PastedLines } from '../../ui/paste.js';
import { IMPLICIT_DEPRECATED, type LoginOptions } from './login-options.js';
import { offerAuthorizationUrl, probe } from './login-offer.js';
import { assertMayStore, credentialsFor } from '../../grant/credential-binding.js';
import { prepareStoring } from './credential-storage.js';
import { resolveLoginSettings } from '../../settings/login-settings.js';
import { askClientSecret, isVerbose } from '../../settings/settings.js';
import { codeFlowJudge, type ResponseJudge } from './login-exchange.js';
import { toStoredToken } from '../../grant/token-record.js';
import { DEFAULT_CALLBACK_PATH } from '../../settings/redirect-uri.js';

/**
 * Signs in through the browser (RFC 8252; RFC 6749 §4.1 with PKCE, or §4.2 with `implicit`): waits
 * up to `wait` s for an authorization response, exchanges it, answers the page and stores the token.
 * Throws settings errors, `callback_timeout`, `interrupted`, `authorization_error`, `token_endpoint_error`.
 */
export async function runBrowserLogin(options: LoginOptions, ctx: AppContext): Promise<void> {
  const isImplicit = options.implicit === true;
  // Under CI nothing opens a browser and nobody pastes: waiting would only cost --wait.
  if (options.browser && isCi(ctx.env) && !ctx.env.BROWSER?.trim() && ctx.stdin.isTTY !== true) {
    throw new MmauthError('no_browser', 'CI is set and no browser will open: a login here would wait for nobody', {
      hint: 'use two steps (mmauth login --start, then --complete <url>), mmauth client-credentials, a BROWSER command, or --no-browser to print the URL and wait anyway',
    });
  }
  const out = await ctx.output();
  const {
    target,
    clientId,
    scope,
    redirect,
    callbackPath,
    usable,
    clientSecret: readSecret,
    discover,
  } = await resolveLoginSettings(options, ctx);
  const { profile, profileName } = target;
  const origin = isImplicit ? 'implicit' : 'authorization_code';
  assertMayStore(profileName, profile, target.endpoints.baseUrl, origin, options.replace === true);
  const intent = await prepareStoring(options, target.store, profileName, out);
  // No secret from any source: a public client (RFC 8252 §8.4), PKCE and client_id alone.
  // A secret given to login is stored (sealed) whatever the flow; the implicit flow never sends it.
  const givenSecret = await readSecret();
  const clientSecret = isImplicit ? undefined : givenSecret;
  if (isImplicit) {
    out.warn(IMPLICIT_DEPRECATED);
  } else if (clientSecret === undefined) {
    // Said before the browser opens, not learnt after the round trip.
    out.info(
      `No client secret given: signing in as a public client (PKCE alone). If ${clientId} is confidential, give its secret with MMAUTH_CLIENT_SECRET or --client-secret-file.`,
    );
  }

  // The server's metadata (RFC 8414), read once the local checks passed: its endpoints and its issuer from here on.
  const served = await discover();
  const { endpoints, serverMetadata } = served;

  // Loaded here, not at start-up: the listener, the paste reader and the fragment check pull in
  // node:http, node:readline and node:crypto, which every other command would pay for.
  const [
    { startCallbackServer },
    { readPastedLines },
    { readPastedLinesOnTerminal },
    { waitForAuthorizationResponses },
    implicit,
  ] = await Promise.all([
    import('../../loopback/callback-server.js'),
    import('../../ui/paste.js'),
    import('../../ui/paste-terminal.js'),
    import('../../ui/authorization-responses.js'),
    import('../../oauth/implicit.js'),
  ]);
  const listener = await startCallbackServer({
    port: redirect?.port ?? 0,
    path: callbackPath,
    isLocalhost: redirect?.isLocalhost === true,
    isFragmentRelay: isImplicit,
  });
  // On a terminal the paste-back line is readline's, under the spinner; elsewhere
  // stdin is read line by line as it comes.
  const isPasteBack = options.clientSecretStdin !== true;
  const isTerminalPaste = isPasteBack && ctx.stdin.isTTY === true && out.isTerminal && !out.isJsonRun;
  let pasted: PastedLines | undefined = isPasteBack && !isTerminalPaste ? readPastedLines(ctx.stdin) : undefined;
  try {
    const redirectUri = redirect?.uri ?? listener.redirectUri;
    const responseType = isImplicit ? 'token' : 'code';
    const request = await createAuthorizationRequest(
      endpoints,
      { clientId, redirectUri, scope, responseType },
      ctx.random,
    );
    ctx.secrets.remember(request.codeVerifier);
    if (options.probe)
      await probe(served.server, request, { clientId, clientSecret: clientSecret ?? usable?.clientSecret }, out);
    await offerAuthorizationUrl(options, ctx, out, request, endpoints.baseUrl, listener, isPasteBack);
    const deadlineMs = ctx.nowMs() + options.wait * 1000;
    const terminalPaste = isTerminalPaste ? readPastedLinesOnTerminal(ctx.stdin, ctx.stderr) : undefined;
    pasted ??= terminalPaste;
    // A `\r` spinner would garble a URL being typed on the same terminal: the spinner is readline's prompt then.
    const indicator = startWaitIndicator(
      out,
      `Waiting for the redirect to ${redirectUri}`,
      deadlineMs,
      ctx.nowMs,
      terminalPaste === undefined ? {} : { paste: terminalPaste },
    );
    const report = (line: () => void) => indicator.log(line);
    // A confidential client refused without its secret: on a terminal, ask once and retry the
    // exchange with the same code; the paste reader lets stdin go first.
    let askedSecret: string | undefined;
    const askSecret = ctx.prompter.canPrompt
      ? async () => {
          indicator.stop();
          pasted?.close();
          out.warn(
            `${endpoints.baseUrl} refused the login without a client secret: ${clientId} is a confidential client`,
          );
          return (askedSecret = await askClientSecret(ctx));
        }
      : undefined;
    const judge: ResponseJudge = isImplicit
      ? async (url) =>
          implicit.parseImplicitAuthorizationResponse(endpoints, implicit.implicitParameters(url), request.state)
      : codeFlowJudge(served.server, { clientId, clientSecret }, request, askSecret);
    const onRefused = (reason: string) =>
      report(() => out.warn(`not accepted: ${reason}; still waiting for the redirect`));
    const responses = waitForAuthorizationResponses({
      listener,
      redirectUri,
      pasted,
      timeoutMs: options.wait * 1000,
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
      const trace = isVerbose(options, ctx.env)
        ? (url: URL) => report(() => out.debug(`< redirect ${redactUrl(url.href, new SecretScrubber())}`))
        : undefined;
      response = await receiveToken(responses, judge, success, {
        onRefused,
        trace,
        scrub: (text) => ctx.secrets.scrub(text),
      }).catch((error: unknown) => {
        // The probe saw the sign-in page: the server took the request; the browser never came back.
        if (!hasErrorCode(error, 'callback_timeout') || !options.probe) throw error;
        throw new MmauthError('callback_timeout', error.message, {
          cause: error,
          details: { ...error.details, probe: 'passed' },
        });
      });
    } finally {
      indicator.stop();
    }
    const nowMs = ctx.nowMs();
    const token = toStoredToken(response, origin, nowMs, scope);
    const former = await storeNewGrant(
      target.store,
      profileName,
      token,
      (current) => ({
        baseUrl: endpoints.baseUrl,
        clientId,
        clientSecret: givenSecret ?? askedSecret ?? credentialsFor(current, endpoints.baseUrl, clientId)?.clientSecret,
        scope,
        redirectUri: redirect?.uri,
        callbackPath: callbackPath === DEFAULT_CALLBACK_PATH ? undefined : callbackPath,
        serverMetadata: serverMetadata ?? current.serverMetadata,
      }),
      nowMs,
      intent,
    );
    const headline = `Logged in to ${endpoints.baseUrl} (profile "${profileName}")${isImplicit ? ' with the implicit flow' : ''}`;
    const replaced = await endReplacedGrant(
      former,
      token,
      { ...options, clientId, clientSecret: clientSecret ?? askedSecret },
      ctx,
      out,
      endpoints.baseUrl,
    );
    reportToken(out, token, profileName, nowMs, options.json === true, headline, { replaced });
  } finally {
    pasted?.close();
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
    /** What the browser's page may show of a failure: the run's secrets scrubbed (attacks N25). */
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
