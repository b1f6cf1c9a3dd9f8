import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';
import { isCi } from '../../ui/prompts.js';
import { reasonNotToOpen } from '../../browser/open-browser.js';
import { redactUrl, SecretScrubber } from '../../http/redact.js';
import { reportNewToken } from '../../ui/token-report.js';
import { startWaitIndicator } from '../../ui/wait-indicator.js';
import type { PastedLines } from '../../ui/paste.js';
import { IMPLICIT_DEPRECATED, type LoginOptions } from './login-options.js';
import { offerAuthorizationUrl } from './login-offer.js';
import { askClientSecret, isVerbose } from '../../settings/settings.js';
import { prepareSignIn } from '../../signin/sign-in-plan.js';
import { signIn, type SignInPorts, type WaitView } from '../../signin/sign-in.js';

/**
 * Signs in through the browser (the sign-in core, signin/sign-in.ts; RFC 8252; RFC 6749 §4.1 with
 * PKCE, or §4.2 with `implicit`) with the terminal's ports: the URL printed and a browser opened
 * (offerAuthorizationUrl), a spinner, paste-back on stdin, a prompt for a confidential client's
 * secret; then reports the token. Throws settings errors, `no_browser` under CI, `callback_timeout`,
 * `interrupted`, `authorization_error`, `token_endpoint_error`.
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
  const draft = await prepareSignIn(options, ctx, out);
  if (isImplicit) {
    out.warn(IMPLICIT_DEPRECATED);
  } else if (draft.clientSecret === undefined) {
    // Said before the browser opens, not learnt after the round trip.
    out.info(
      `No client secret given: signing in as a public client (PKCE alone). If ${draft.clientId} is confidential, give its secret with MMAUTH_CLIENT_SECRET or --client-secret-file.`,
    );
  }
  // The server's metadata (RFC 8414), read once the local checks passed: its endpoints and its issuer from here on.
  const plan = await draft.discover();
  const baseUrl = plan.served.endpoints.baseUrl;
  // No browser can open here and the server offers the device grant: the code on another device
  // beats an address to paste back (--paste keeps that).
  const whyNot = ctx.env.BROWSER?.trim() ? undefined : reasonNotToOpen(ctx.env, ctx.platform);
  if (!isImplicit && options.browser && options.paste !== true && whyNot !== undefined) {
    const device = await import('./login-device.js');
    const { deviceEndpointOf } = await import('../../signin/device-endpoint.js');
    const endpoint = deviceEndpointOf(plan);
    if (endpoint !== undefined) {
      out.info(
        `No browser can open here (${whyNot}): signing in from another device (--paste keeps the address to paste back).`,
      );
      return device.signInOnDevice(plan, endpoint, options, ctx, out);
    }
  }
  // Loaded here, not at start-up: the paste readers pull in node:readline.
  const [{ readPastedLines }, { readPastedLinesOnTerminal }] = await Promise.all([
    import('../../ui/paste.js'),
    import('../../ui/paste-terminal.js'),
  ]);
  // On a terminal the paste-back line is readline's, under the spinner; elsewhere stdin is read
  // line by line as it comes.
  const isPasteBack = options.clientSecretStdin !== true;
  const isTerminalPaste = isPasteBack && ctx.stdin.isTTY === true && out.isTerminal && !out.isJsonRun;
  let pasted: PastedLines | undefined = isPasteBack && !isTerminalPaste ? readPastedLines(ctx.stdin) : undefined;
  let view: WaitView | undefined;
  const ports: SignInPorts = {
    offer: (request, listener) => offerAuthorizationUrl(options, ctx, out, request, baseUrl, listener, isPasteBack),
    startWait: (redirectUri, deadlineMs) => {
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
      view = {
        pasted,
        log: (print) => indicator.log(print),
        stop: () => {
          indicator.stop();
          pasted?.close();
        },
      };
      return view;
    },
    // A confidential client refused without its secret: on a terminal, ask once and retry the
    // exchange with the same code; the paste reader lets stdin go first.
    askSecret: ctx.prompter.canPrompt ? () => askClientSecret(ctx) : undefined,
    traceRedirect: isVerbose(options, ctx.env)
      ? (url) => out.debug(`< redirect ${redactUrl(url.href, new SecretScrubber())}`)
      : undefined,
    notices: out,
  };
  try {
    const signedIn = await signIn(plan, ports, ctx);
    const headline = `Logged in to ${baseUrl} (profile "${plan.profileName}")${isImplicit ? ' with the implicit flow' : ''}`;
    reportNewToken(out, signedIn.token, plan.profileName, options.json === true, headline, {
      replaced: signedIn.replaced,
    });
  } finally {
    view?.stop();
    pasted?.close();
  }
}
