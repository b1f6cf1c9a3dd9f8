import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import {
  createAuthorizationRequest,
  exchangeAuthorizationCode,
  validateAuthorizationResponse,
} from '../../oauth/authorization-code.js';
import type { TokenResponse } from '../../oauth/parse.js';
import { lookUpResourceOwner } from '../../oauth/token-info.js';
import type { PendingLogin } from '../../store/profile.js';
import { formatInstant } from '../../ui/format.js';
import { reportToken } from '../../ui/token-report.js';
import { completionUrl } from './login-exchange.js';
import { endReplacedGrant, storeNewGrant } from '../../signin/replaced-grant.js';
import { IMPLICIT_DEPRECATED, type LoginOptions } from './login-options.js';
import { probeBeforeWaiting } from '../../signin/sign-in.js';
import { assertMayStore, credentialsFor } from '../../grant/credential-binding.js';
import { profileFlag } from '../../settings/next-step.js';
import { prepareStoring } from '../../signin/credential-storage.js';
import { resolveCompletionSettings, resolveLoginSettings } from '../../settings/login-settings.js';
import { SECRET_SOURCES } from '../../failure/failure-hints.js';
import { askClientSecret } from '../../settings/settings.js';
import { requireProfile, resolveTarget } from '../../settings/target.js';
import { toStoredToken } from '../../grant/token-record.js';
import { DEFAULT_CALLBACK_PATH } from '../../settings/redirect-uri.js';

/** How long a started login may be completed, in ms. */
const PENDING_TTL_MS = 10 * 60_000;

/** A free port on 127.0.0.1 for the redirect URI of a login nobody listens for. */
async function freeLoopbackPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `login --start`: builds the authorization request (state, PKCE S256; RFC 6749 §4.1.1, RFC 7636)
 * for `http://127.0.0.1:PORT/callback` (a free port) or --redirect-uri, asks the authorization
 * endpoint once (unless --no-probe), stores it as the profile's pending login (10 minutes; a newer
 * one replaces it; the verifier is never printed) and prints the URL (--json: `{authorization_url,
 * redirect_uri, expires_at, profile}`), without listening.
 */
export async function runLoginStart(options: LoginOptions, ctx: AppContext): Promise<void> {
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
  const { profileName } = target;
  const intent = await prepareStoring(options, target.store, profileName, out);
  const served = await discover(); // the server's metadata (RFC 8414), once the local checks passed
  const { endpoints, serverMetadata } = served;
  const redirectUri = redirect?.uri ?? `http://127.0.0.1:${await freeLoopbackPort()}${callbackPath}`;
  const responseType = options.implicit === true ? 'token' : 'code';
  const request = await createAuthorizationRequest(
    endpoints,
    { clientId, redirectUri, scope, responseType },
    ctx.random,
  );
  ctx.secrets.remember(request.codeVerifier);
  const secret = await readSecret();
  if (options.probe) await probeBeforeWaiting(served.server, request, { clientId, clientSecret: secret }, out);
  // A secret given now (not the stored one) goes with the pending login, sealed like its verifier.
  const givenSecret = secret !== undefined && secret !== usable?.clientSecret ? secret : undefined;
  const expiresAt = new Date(ctx.nowMs() + PENDING_TTL_MS).toISOString();
  const pending: PendingLogin = {
    url: request.url.href,
    state: request.state,
    codeVerifier: request.codeVerifier,
    redirectUri,
    responseType,
    clientId,
    clientSecret: givenSecret,
    scope,
    expiresAt,
  };
  await target.store.update(
    profileName,
    (current) => ({
      ...current,
      baseUrl: current.baseUrl ?? endpoints.baseUrl,
      serverMetadata: serverMetadata ?? current.serverMetadata,
      callbackPath: callbackPath === DEFAULT_CALLBACK_PATH ? undefined : callbackPath,
      pendingLogin: pending,
    }),
    intent,
  );
  if (options.json === true) {
    out.json({
      authorization_url: request.url.href,
      redirect_uri: redirectUri,
      expires_at: formatInstant(Date.parse(expiresAt)),
      profile: profileName,
    });
  } else {
    out.data(request.url.href);
  }
  if (responseType === 'token') out.warn(IMPLICIT_DEPRECATED);
  // The implicit flow's answer is in the fragment (#…), the code flow's in the query (?…).
  const ending = responseType === 'token' ? '#…' : '?…';
  out.info(
    `Open that URL in a browser, sign in and allow access; the browser then ends on ${redirectUri}${ending} (nothing listens there).\n` +
      `Copy that whole address and run, within 10 minutes:\n  mmauth login --complete '<the address>'${profileFlag(profileName)}`,
  );
}

/**
 * `login --complete <url|->`: checks the redirect URL against the profile's pending login (state
 * first; RFC 6749 §4.1.2, §10.12), exchanges the code with its verifier (or reads the implicit
 * fragment), stores the token and clears the pending login, and reports as `login` does. Throws
 * `pending_login_missing` / `pending_login_expired` (exit 2), `state_mismatch`, `authorization_error`
 * (a denial, exit 4), and what the exchange throws.
 */
export async function runLoginComplete(options: LoginOptions & { complete: string }, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profileName } = target;
  const profile = requireProfile(target);
  const intent = await prepareStoring(options, target.store, profileName, out);
  const pending = profile.pendingLogin;
  // A pending login whose sealed verifier cannot be opened is a lost credential, not a missing login.
  if (pending === undefined && target.store.listOne(profileName)?.hasPendingLogin === true) {
    await target.store.read(profileName);
  }
  if (pending === undefined) {
    throw new MmauthError('pending_login_missing', `profile "${profileName}" has no login waiting to be completed`, {
      hint: `start one: mmauth login --start${profileFlag(profileName)}`,
    });
  }
  if (Date.parse(pending.expiresAt) <= ctx.nowMs()) {
    await target.store.update(profileName, (current) => ({ ...current, pendingLogin: undefined }));
    throw new MmauthError(
      'pending_login_expired',
      `the login started for profile "${profileName}" expired at ${formatInstant(Date.parse(pending.expiresAt))}`,
      {
        hint: `start again: mmauth login --start${profileFlag(profileName)}`,
      },
    );
  }
  // The code and the verifier go only to the server the login started at; --complete never rebinds.
  const startedAt = new URL(pending.url).origin;
  if (startedAt !== new URL(endpoints.baseUrl).origin) {
    throw new MmauthError(
      'base_url_mismatch',
      `the login of profile "${profileName}" was started at ${startedAt}; refusing to complete it at ${endpoints.baseUrl}`,
    );
  }
  const url = await completionUrl(options.complete, ctx);
  if (url.origin === new URL(pending.url).origin && url.pathname === new URL(pending.url).pathname) {
    throw new MmauthError(
      'usage',
      'that is the authorization URL --start printed, not the address the browser ended on after you allowed access',
      {
        hint: `open it in a browser, allow access, then give --complete the address it ends on (${pending.redirectUri}…)`,
      },
    );
  }
  const request = {
    url: new URL(pending.url),
    state: pending.state,
    codeVerifier: pending.codeVerifier,
    redirectUri: pending.redirectUri,
  };
  const isImplicit = pending.responseType === 'token';
  const origin = isImplicit ? 'implicit' : 'authorization_code';
  assertMayStore(profileName, profile, endpoints.baseUrl, origin, options.replace === true);
  // A secret given to login is stored (sealed) whatever the flow; the implicit flow never sends it.
  const givenSecret = await resolveCompletionSettings(options, ctx, target, pending).clientSecret();
  let clientSecret = isImplicit ? undefined : givenSecret;
  let response: TokenResponse;
  if (isImplicit) {
    const implicit = await import('../../oauth/implicit.js');
    response = implicit.parseImplicitAuthorizationResponse(endpoints, implicit.implicitParameters(url), pending.state);
  } else {
    const parameters = await validateAuthorizationResponse(endpoints, pending.clientId, url.searchParams, request);
    const exchange = (secret: string | undefined) =>
      exchangeAuthorizationCode(
        target.server,
        { clientId: pending.clientId, clientSecret: secret },
        parameters,
        request,
      );
    try {
      response = await exchange(clientSecret);
    } catch (error) {
      // A confidential client refused without its secret: asked on a terminal, as one-step login does (the code is not burnt).
      if (
        clientSecret !== undefined ||
        !hasErrorCode(error, 'token_endpoint_error') ||
        error.oauthError !== 'invalid_client'
      )
        throw error;
      if (!ctx.prompter.canPrompt) {
        throw new MmauthError(
          'client_secret_required',
          `${pending.clientId} is a confidential client: the code exchange needs its secret at --complete`,
          { cause: error, hint: `give it to --complete: ${SECRET_SOURCES}` },
        );
      }
      out.warn(
        `${endpoints.baseUrl} refused the exchange without a client secret: ${pending.clientId} is a confidential client`,
      );
      clientSecret = await askClientSecret(ctx);
      response = await exchange(clientSecret);
    }
  }
  const nowMs = ctx.nowMs();
  const token = toStoredToken(response, origin, nowMs, pending.scope);
  const former = await storeNewGrant(
    target.store,
    profileName,
    token,
    (current) => ({
      baseUrl: endpoints.baseUrl,
      clientId: pending.clientId,
      clientSecret:
        clientSecret ?? givenSecret ?? credentialsFor(current, endpoints.baseUrl, pending.clientId)?.clientSecret,
      scope: pending.scope,
      pendingLogin: undefined,
    }),
    nowMs,
    intent,
  );
  const headline = `Logged in to ${endpoints.baseUrl} (profile "${profileName}")${isImplicit ? ' with the implicit flow' : ''}`;
  const run = { ...options, clientId: pending.clientId, clientSecret };
  const replaced = await endReplacedGrant(former, token, run, ctx, out, endpoints.baseUrl);
  const owner = await lookUpResourceOwner(target.server, token.accessToken);
  reportToken(out, token, profileName, nowMs, options.json === true, headline, { replaced, resource_owner_id: owner });
  // Anyone who saw the printed URL could have made this a grant of their own account (attacks B3): say whose it is.
  if (owner !== null)
    out.info(`  Signed in as resource owner ${owner}: if that is not your account, run \`mmauth logout\`.`);
}
