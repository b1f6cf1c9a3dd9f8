import { isSshSession } from '../../browser/open-browser.js';
import type { AppContext } from '../../context.js';
import type { CallbackServer } from '../../loopback/callback-server.js';
import type { AuthorizationRequest } from '../../oauth/authorization-code.js';
import type { Output } from '../../ui/output.js';
import type { LoginOptions } from './login-options.js';
import { isVerbose } from '../../settings/settings.js';

/**
 * Prints the authorization URL (for a person: it is in no argv), opens a browser unless
 * --no-browser, and explains paste-back on a terminal. A browser mmauth launches gets the
 * listener's one-time start address instead of the authorization URL, so that `state` and the
 * PKCE challenge never reach a process's argv (readable by every local user in /proc); when it
 * cannot be launched, the start address is disarmed again.
 */
export async function offerAuthorizationUrl(
  options: LoginOptions,
  ctx: AppContext,
  out: Output,
  request: AuthorizationRequest,
  baseUrl: string,
  listener: Pick<CallbackServer, 'port' | 'armStart' | 'disarmStart'>,
  isPasteBack: boolean,
): Promise<void> {
  const { port } = listener;
  const offer = () =>
    out.instruct(`Open this URL in a browser to sign in to ${baseUrl} and allow access:\n\n  ${request.url.href}\n`);
  // Under --json the URL is shown only where the user must open it: no browser launched, or it
  // failed (the project's rules: no line for people that the run does not need).
  const isUrlDeferred = out.isJsonRun && options.browser;
  if (!isUrlDeferred) offer();
  if (options.browser) {
    const startUrl = listener.armStart(request.url.href);
    const outcome = await ctx.browser(isVerbose(options, ctx.env)).open(startUrl);
    if (!outcome.isOpened) listener.disarmStart();
    // A BROWSER command that fails at once (BROWSER=false) opened nothing: say so now (never
    // "opened"), and take the printed URL's redirect without the start address's cookie.
    const failed = (code: number) => {
      listener.disarmStart();
      if (isUrlDeferred) offer();
      out.warn(
        `the BROWSER command failed (exit ${code ?? 'by a signal'}): open the URL above yourself; still waiting`,
      );
    };
    if (outcome.isOpened && outcome.exited !== undefined) {
      const early = await Promise.race([
        outcome.exited,
        new Promise<'running'>((done) => setTimeout(() => done('running'), 250)),
      ]);
      // Killed by a signal (null) is no failure of the command: a browser may hand over and be ended.
      if (early !== 'running' && early !== 0 && early !== null) {
        failed(early);
        return;
      }
      void outcome.exited.then((code) => code !== 0 && code !== null && failed(code));
    }
    if (outcome.isOpened) {
      // The system opener returns before any browser shows up (a broken DISPLAY fails later, silently).
      out.info(
        outcome.via === 'the system browser'
          ? 'Asked the system browser to open it.'
          : `Opened it with ${outcome.via}.`,
      );
    } else {
      if (isUrlDeferred) offer();
      out.instruct(`Not opening a browser: ${outcome.reason}. Open the URL yourself, on any machine.`);
    }
  }
  if (isPasteBack && ctx.stdin.isTTY === true) {
    const forward = isSshSession(ctx.env)
      ? `\n(Or forward the port first: ssh -L ${port}:127.0.0.1:${port} <this host>.)`
      : '';
    out.instruct(
      `If the browser runs on another machine, it will end on an address starting with ${request.redirectUri}\n` +
        `that it cannot load: copy that whole address from its address bar, paste it here and press Enter.${forward}\n`,
    );
  }
}
