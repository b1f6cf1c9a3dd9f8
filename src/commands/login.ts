import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { UsageError } from '../errors.js';
import { createAuthorizationRequest, exchangeAuthorizationCode, ForeignCallbackError, validateCallback } from '../oauth/authorization-code.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import { startCallbackServer } from '../loopback/callback-server.js';
import { startWaitIndicator } from '../ui/wait-indicator.js';
import {
  isDebug,
  openSession,
  reportToken,
  type ClientOptions,
  parseSeconds,
  pickSetting,
  requireClientId,
  resolveClientSecret,
  resolveScope,
  toStoredToken,
  withClientOptions,
  withCommonOptions,
} from './common.js';

/** Options of `mmauth login`. */
export interface LoginOptions extends ClientOptions {
  scope?: string;
  redirectUri?: string;
  /** Seconds to wait for the redirect. */
  wait: number;
  /** false with --no-browser. */
  browser: boolean;
}

/** A fixed loopback redirect URI given with --redirect-uri: where to listen and what to send. */
export interface LoopbackRedirect {
  uri: string;
  port: number;
  path: string;
}

/**
 * Checks a --redirect-uri value: `http://127.0.0.1:PORT/path` or `http://localhost:PORT/path`
 * with an explicit port, no query or fragment (RFC 8252 §7.3, §8.3). Throws UsageError (exit 2).
 */
export function parseLoopbackRedirectUri(value: string): LoopbackRedirect {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--redirect-uri "${value}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' || (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')) {
    throw new UsageError(`--redirect-uri must be http://127.0.0.1:PORT/path (the listener binds 127.0.0.1 only), got ${value}`);
  }
  if (url.port === '' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`--redirect-uri needs an explicit port and no query, fragment or credentials, got ${value}`, {
      hint: 'e.g. --redirect-uri http://127.0.0.1:8976/callback',
    });
  }
  return { uri: url.href, port: Number(url.port), path: url.pathname };
}

/** Registers `mmauth login`: flags, description and examples; the logic is runLogin. */
export function registerLogin(program: Command, ctx: AppContext): void {
  withClientOptions(withCommonOptions(program.command('login')))
    .description('sign in through the browser (authorization code flow with PKCE) and store the token')
    .option('--scope <scopes>', 'space-separated scopes to request (default "service")')
    .option('--redirect-uri <uri>', 'fixed loopback redirect URI, e.g. http://127.0.0.1:8976/callback (default: 127.0.0.1, an ephemeral port, /callback)')
    .option('--wait <seconds>', 'how long to wait for the browser to come back', parseSeconds(1), 300)
    .option('--no-browser', 'do not open a browser; print the URL only')
    .addHelpText('after', `
Examples:
  $ mmauth login --base-url https://maps.example.com --client-id abc123
  $ MMAUTH_CLIENT_SECRET=… mmauth login --scope "service userinfo.email" --no-browser
  $ mmauth login --redirect-uri http://127.0.0.1:8976/callback --profile work`)
    .action(async (options) => runLogin(options, ctx));
}

/**
 * The authorization code flow (spec §4.1–4.2; RFC 6749 §4.1; RFC 7636; RFC 8252): starts the
 * loopback listener, opens the authorization URL, waits up to `wait` s for the redirect, checks
 * `state`, exchanges the code, then stores base URL, client id, secret, scope and token in the
 * profile. Nothing is stored unless every step succeeded. Errors: UsageError (2),
 * NetworkError/CallbackTimeoutError (3), AuthError (4), InterruptedError (130), ServerError (1).
 */
export async function runLogin(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { endpoints, profile, profileName } = session;
  const clientId = requireClientId(options.clientId, ctx, profile);
  const scope = resolveScope(options.scope, profile, DEFAULT_SCOPE);
  const fixedRedirect = pickSetting(options.redirectUri, undefined, profile?.redirectUri);
  const redirect = fixedRedirect === undefined ? undefined : parseLoopbackRedirectUri(fixedRedirect);
  const clientSecret = await resolveClientSecret(options, ctx, profile);

  const listener = await startCallbackServer({ port: redirect?.port ?? 0, path: redirect?.path ?? '/callback' });
  try {
    const redirectUri = redirect?.uri ?? listener.redirectUri;
    const request = await createAuthorizationRequest(endpoints, { clientId, redirectUri, scope });
    out.info(`Open this URL in a browser to sign in to ${endpoints.baseUrl} and allow access:\n\n  ${request.url.href}\n`);
    if (options.browser) {
      const outcome = await ctx.browser(isDebug(options, ctx.env)).open(request.url.href);
      out.info(outcome.isOpened ? `Opened it with ${outcome.via}.` : `Not opening a browser: ${outcome.reason}. Open the URL yourself.`);
    }
    const deadlineMs = ctx.nowMs() + options.wait * 1000;
    const indicator = startWaitIndicator(out, `Waiting for the redirect to ${redirectUri}`, deadlineMs, ctx.nowMs);
    let response;
    try {
      response = await listener.waitForCallback(
        async (url) => {
          let parameters: URLSearchParams;
          try {
            parameters = await validateCallback(endpoints, clientId, url.searchParams, request.state);
          } catch (error) {
            if (error instanceof ForeignCallbackError) {
              return { refusal: error.message };
            }
            throw error;
          }
          const token = await exchangeAuthorizationCode(session.peer, { clientId, clientSecret }, parameters, redirectUri, request.codeVerifier);
          return { value: token, page: { isSuccess: true, title: 'Signed in', detail: `mmauth received an access token for ${endpoints.baseUrl}.` } };
        },
        {
          timeoutMs: options.wait * 1000,
          signal: ctx.signal,
          onRefused: (reason) => indicator.log(() => out.warn(`refused a redirect that does not belong to this login (${reason}); still waiting`)),
        },
      );
    } finally {
      indicator.stop();
    }
    const nowMs = ctx.nowMs();
    const token = toStoredToken(response, 'authorization_code', nowMs, scope);
    session.store.update(profileName, (current) => ({
      ...current,
      baseUrl: endpoints.baseUrl,
      clientId,
      clientSecret,
      scope,
      redirectUri: redirect?.uri,
      token,
    }));
    reportToken(out, token, profileName, nowMs, options.json === true, `Logged in to ${endpoints.baseUrl} (profile "${profileName}")`);
  } finally {
    await listener.close();
  }
}
