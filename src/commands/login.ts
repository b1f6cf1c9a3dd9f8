import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { UsageError } from '../errors.js';
import { createAuthorizationRequest, exchangeAuthorizationCode, ForeignCallbackError, validateCallback } from '../oauth/authorization-code.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import { isSshSession } from '../browser/open-browser.js';
import { redactUrl, SecretScrubber } from '../http/redact.js';
import type { TokenResponse } from '../oauth/parse.js';
import { requireTokenInfo } from '../oauth/token-info.js';
import type { StoredToken } from '../store/profile.js';
import { startWaitIndicator } from '../ui/wait-indicator.js';
import {
  chooseScope,
  isDebug,
  openSession,
  reportToken,
  type ClientOptions,
  parseSeconds,
  pickSetting,
  requireClientId,
  resolveClientSecret,
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
  /** The implicit flow instead of the code flow. */
  implicit?: boolean;
  /** Store a personal access token read from stdin. */
  withToken?: boolean;
  /** false with --no-verify: store a --with-token token without asking token info. */
  verify: boolean;
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
    .option('--scope <scopes>', 'space-separated scopes to request (default "service"; a checkbox on a terminal)')
    .option('--redirect-uri <uri>', 'fixed loopback redirect URI, e.g. http://127.0.0.1:8976/callback (default: 127.0.0.1, an ephemeral port, /callback)')
    .option('--wait <seconds>', 'how long to wait for the browser to come back', parseSeconds(1), 300)
    .option('--no-browser', 'do not open a browser; print the URL only')
    .option('--implicit', 'use the implicit flow (token in the URL fragment; deprecated, RFC 9700 §2.1.2; no client secret)')
    .option('--with-token', 'store a personal access token read from standard input instead of signing in')
    .option('--no-verify', 'with --with-token: store the token without asking token info about it')
    .addHelpText('after', `
While login waits, you may paste the full URL the browser ended on (the browser runs on another
machine and cannot reach 127.0.0.1, e.g. over SSH) and press Enter.

Examples:
  $ mmauth login --base-url https://maps.example.com --client-id abc123
  $ MMAUTH_CLIENT_SECRET=… mmauth login --scope "service userinfo.email" --no-browser
  $ mmauth login --redirect-uri http://127.0.0.1:8976/callback --profile work
  $ mmauth login --implicit --client-id abc123
  $ mmauth login --with-token --base-url https://maps.example.com < token.txt`)
    .action(async (options) => runLogin(options, ctx));
}

/**
 * Signs in and stores the token in the profile: the authorization code flow with PKCE (spec §4.1–4.2;
 * RFC 6749 §4.1; RFC 7636; RFC 8252), or with `implicit` the implicit flow (RFC 6749 §4.2; spec §2.3),
 * or with `withToken` a personal access token (spec §1, §5.2; runLoginWithToken). The loopback
 * listener waits up to `wait` s for the redirect while pasted redirect URLs are read from stdin;
 * `state` is checked either way. Nothing is stored unless every step succeeded. Errors:
 * UsageError (2), NetworkError/CallbackTimeoutError (3), AuthError (4), InterruptedError (130),
 * ServerError (1).
 */
export async function runLogin(options: LoginOptions, ctx: AppContext): Promise<void> {
  if (options.withToken === true) {
    if (options.implicit === true || options.redirectUri !== undefined || options.scope !== undefined) {
      throw new UsageError('--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope');
    }
    await runLoginWithToken(options, ctx);
    return;
  }
  if (options.verify === false) {
    throw new UsageError('--no-verify only applies to --with-token');
  }
  const isImplicit = options.implicit === true;
  if (isImplicit && (options.clientSecretFile !== undefined || options.clientSecretStdin === true)) {
    throw new UsageError('the implicit flow uses no client secret: drop --client-secret-file/--client-secret-stdin');
  }
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { endpoints, profile, profileName } = session;
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const scope = await chooseScope(options.scope, profile, DEFAULT_SCOPE, ctx);
  const fixedRedirect = pickSetting(options.redirectUri, undefined, profile?.redirectUri);
  const redirect = fixedRedirect === undefined ? undefined : parseLoopbackRedirectUri(fixedRedirect);
  const clientSecret = isImplicit ? undefined : await resolveClientSecret(options, ctx, profile);
  if (isImplicit) {
    out.warn('the implicit flow is deprecated (RFC 9700 §2.1.2: the token travels in the browser\'s URL); prefer `mmauth login` without --implicit');
  }

  // Loaded here, not at start-up: the listener, the paste reader and the fragment check pull in
  // node:http, node:readline and node:crypto, which every other command would pay for.
  const [{ startCallbackServer }, { readPastedLines }, { implicitParameters, parseImplicitCallback }] = await Promise.all([
    import('../loopback/callback-server.js'),
    import('../ui/paste.js'),
    import('../oauth/implicit.js'),
  ]);
  const listener = await startCallbackServer({ port: redirect?.port ?? 0, path: redirect?.path ?? '/callback', isFragmentRelay: isImplicit });
  const pasted = options.clientSecretStdin === true ? undefined : readPastedLines(ctx.stdin);
  try {
    const redirectUri = redirect?.uri ?? listener.redirectUri;
    const request = await createAuthorizationRequest(endpoints, { clientId, redirectUri, scope, responseType: isImplicit ? 'token' : 'code' });
    out.info(`Open this URL in a browser to sign in to ${endpoints.baseUrl} and allow access:\n\n  ${request.url.href}\n`);
    if (options.browser) {
      const outcome = await ctx.browser(isDebug(options, ctx.env)).open(request.url.href);
      if (outcome.isOpened) {
        out.info(`Opened it with ${outcome.via}.`);
      } else {
        out.info(`Not opening a browser: ${outcome.reason}. Open the URL yourself, on any machine.`);
      }
    }
    if (pasted !== undefined && ctx.stdin.isTTY === true) {
      out.info(
        `If the browser runs on another machine, it will end on an address starting with ${redirectUri}\n` +
          `that it cannot load: copy that whole address from its address bar, paste it here and press Enter.` +
          `${isSshSession(ctx.env) ? `\n(Or forward the port first: ssh -L ${listener.port}:127.0.0.1:${listener.port} <this host>.)` : ''}\n`,
      );
    }
    const deadlineMs = ctx.nowMs() + options.wait * 1000;
    // A redrawn spinner would garble a URL being pasted on the same terminal: one static line then.
    const indicator = startWaitIndicator(out, `Waiting for the redirect to ${redirectUri}`, deadlineMs, ctx.nowMs, { isStatic: pasted !== undefined && ctx.stdin.isTTY === true });
    const successPage = { isSuccess: true, title: 'Signed in', detail: `mmauth received an access token for ${endpoints.baseUrl}.` };
    let response: TokenResponse;
    try {
      response = await listener.waitForCallback<TokenResponse>(
        async (url) => {
          if (isDebug(options, ctx.env)) {
            indicator.log(() => out.debug(`< redirect ${redactUrl(url.href, new SecretScrubber())}`));
          }
          try {
            if (isImplicit) {
              return { value: parseImplicitCallback(endpoints, implicitParameters(url), request.state), page: successPage };
            }
            const parameters = await validateCallback(endpoints, clientId, url.searchParams, request.state);
            const token = await exchangeAuthorizationCode(session.peer, { clientId, clientSecret }, parameters, redirectUri, request.codeVerifier);
            return { value: token, page: successPage };
          } catch (error) {
            if (error instanceof ForeignCallbackError) {
              return { refusal: error.message };
            }
            throw error;
          }
        },
        {
          timeoutMs: options.wait * 1000,
          signal: ctx.signal,
          onRefused: (reason) => indicator.log(() => out.warn(`not accepted: ${reason}; still waiting for the redirect`)),
          ...(pasted === undefined ? {} : { pasted }),
        },
      );
    } finally {
      indicator.stop();
    }
    const nowMs = ctx.nowMs();
    const token = toStoredToken(response, isImplicit ? 'implicit' : 'authorization_code', nowMs, scope);
    await session.store.update(profileName, (current) => ({
      ...current,
      baseUrl: endpoints.baseUrl,
      clientId,
      clientSecret: clientSecret ?? current.clientSecret,
      scope,
      redirectUri: redirect?.uri,
      token,
    }));
    reportToken(out, token, profileName, nowMs, options.json === true, `Logged in to ${endpoints.baseUrl} (profile "${profileName}")${isImplicit ? ' with the implicit flow' : ''}`);
  } finally {
    pasted?.close();
    await listener.close();
  }
}


/**
 * `login --with-token`: reads a personal access token (spec §1, §5.2) from stdin (a masked prompt
 * on a TTY; never argv), asks token info about it (spec §4.3) unless `verify` is false, and stores
 * it as grant `personal` with the scopes and remaining lifetime token info reported. Errors:
 * UsageError (2) for an empty token or one with white space; AuthError (4) when token info refuses
 * it (nothing stored); NetworkError (3); ServerError (1).
 */
export async function runLoginWithToken(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { endpoints, profileName } = session;
  const raw = ctx.stdin.isTTY === true ? await ctx.prompter.secret('Personal access token:', 'standard input: mmauth login --with-token < token.txt') : await ctx.readStdin();
  const accessToken = raw.trim();
  if (accessToken === '' || /\s/.test(accessToken)) {
    throw new UsageError(accessToken === '' ? 'no token on standard input' : 'the token on standard input spans several words or lines', {
      hint: 'pipe exactly one token: mmauth login --with-token < token.txt',
    });
  }
  const nowMs = ctx.nowMs();
  let token: StoredToken = { accessToken, tokenType: 'bearer', scope: undefined, grant: 'personal', obtainedAt: new Date(nowMs).toISOString(), expiresAt: undefined };
  if (options.verify) {
    const info = await requireTokenInfo(session.peer, accessToken);
    token = {
      ...token,
      scope: info.scopes.length === 0 ? undefined : info.scopes.join(' '),
      expiresAt: info.expiresInS === null ? undefined : new Date(nowMs + info.expiresInS * 1000).toISOString(),
    };
  } else {
    out.warn('stored without checking it (--no-verify): `mmauth info` will tell whether the server accepts it');
  }
  await session.store.update(profileName, (current) => ({ ...current, baseUrl: endpoints.baseUrl, token }));
  reportToken(out, token, profileName, nowMs, options.json === true, `Stored a personal access token for ${endpoints.baseUrl} (profile "${profileName}")${options.verify ? ', checked with token info' : ''}`);
}
