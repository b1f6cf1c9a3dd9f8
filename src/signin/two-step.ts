import type { AppContext } from '../context.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import {
  createAuthorizationRequest,
  exchangeAuthorizationCode,
  validateAuthorizationResponse,
} from '../oauth/authorization-code.js';
import type { TokenResponse } from '../oauth/parse.js';
import { lookUpResourceOwner } from '../oauth/token-info.js';
import type { PendingLogin } from '../store/profile.js';
import { assertMayStore, credentialsFor } from '../grant/credential-binding.js';
import { toStoredToken } from '../grant/token-record.js';
import type { ClientOptions } from '../settings/setting-options.js';
import { resolveCompletionSettings, resolveLoginSettings } from '../settings/login-settings.js';
import { requireProfile, resolveTarget } from '../settings/target.js';
import { DEFAULT_CALLBACK_PATH } from '../settings/redirect-uri.js';
import { prepareStoring, type StorageOptions } from './credential-storage.js';
import { storeGrant } from './replaced-grant.js';
import { probeBeforeWaiting } from './probe.js';
import type { SignedIn, SignInNotices } from './sign-in.js';
import type { PlanNotices, SignInOptions } from './sign-in-plan.js';

/** How long a started login may be completed, in ms. */
export const PENDING_TTL_MS = 10 * 60_000;

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

/** What the first step stored: the authorization URL to open, where the browser will end, until when. */
export interface StartedSignIn {
  profileName: string;
  authorizationUrl: string;
  redirectUri: string;
  /** ISO 8601: the second step must come before. */
  expiresAt: string;
  responseType: 'code' | 'token';
}

/**
 * The first of two steps (`login --start`): builds the authorization request (state, PKCE S256;
 * RFC 6749 §4.1.1, RFC 7636) for `http://127.0.0.1:PORT/<callback path>` (a free port) or the fixed
 * redirect URI, asks the authorization endpoint once (`probe`), and stores it as the profile's
 * pending login (PENDING_TTL_MS; a newer one replaces it; the verifier sealed like a secret, never
 * shown), without listening. Throws what the settings, the probe and the store throw.
 */
export async function startTwoStep(
  options: SignInOptions,
  ctx: AppContext,
  notices: PlanNotices & SignInNotices,
): Promise<StartedSignIn> {
  const settings = await resolveLoginSettings(options, ctx);
  const { target, clientId, scope, redirect, callbackPath, usable } = settings;
  const { profileName } = target;
  const intent = await prepareStoring(options, target.store, profileName, notices);
  const served = await settings.discover(); // the server's metadata (RFC 8414), once the local checks passed
  const { endpoints, serverMetadata } = served;
  const redirectUri = redirect?.uri ?? `http://127.0.0.1:${await freeLoopbackPort()}${callbackPath}`;
  const responseType = options.implicit === true ? 'token' : 'code';
  const request = await createAuthorizationRequest(
    endpoints,
    { clientId, redirectUri, scope, responseType },
    ctx.random,
  );
  ctx.secrets.remember(request.codeVerifier);
  const secret = await settings.clientSecret();
  if (options.probe) await probeBeforeWaiting(served.server, request, { clientId, clientSecret: secret }, notices);
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
  return { profileName, authorizationUrl: request.url.href, redirectUri, expiresAt, responseType };
}

/** What the second step is given besides the options: the address the browser ended on, and its ports. */
export interface Completion {
  /** Reads the address (read after the pending login is checked: `-` reads stdin). */
  readUrl(): Promise<URL>;
  /** Asks a confidential client's secret on a terminal; absent: that refusal is `client_secret_required`. */
  askSecret?: (() => Promise<string>) | undefined;
  notices: PlanNotices & SignInNotices;
}

/**
 * The second step (`login --complete`): checks the address the browser ended on against the
 * profile's pending login (its origin, `state` first; RFC 6749 §4.1.2, §10.12), exchanges the code
 * with its verifier (or reads the implicit fragment), stores the grant and clears the pending login
 * and ends the grant it replaced (storeGrant), and asks token info whose grant it is. Throws
 * `pending_login_missing` / `pending_login_expired` (`details.expiresAt`), `base_url_mismatch`,
 * `usage` (reason `authorization_url_given`: the URL the first step printed; `details.redirectUri`),
 * `state_mismatch`, `authorization_error`, `client_secret_required` (reason `second_step`,
 * `details.clientId`), and what the exchange throws; the command line words them in its flags.
 */
export async function completeTwoStep(
  options: ClientOptions & StorageOptions & { replace?: boolean | undefined },
  completion: Completion,
  ctx: AppContext,
): Promise<SignedIn & { isImplicit: boolean; resourceOwner: string | number | null }> {
  const { notices } = completion;
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profileName } = target;
  const profile = requireProfile(target);
  const intent = await prepareStoring(options, target.store, profileName, notices);
  const pending = profile.pendingLogin;
  // A pending login whose sealed verifier cannot be opened is a lost credential, not a missing login.
  if (pending === undefined && target.store.listOne(profileName)?.hasPendingLogin === true) {
    await target.store.read(profileName);
  }
  if (pending === undefined) {
    throw new MmauthError('pending_login_missing', `profile "${profileName}" has no login waiting to be completed`, {
      details: { profile: profileName },
    });
  }
  if (Date.parse(pending.expiresAt) <= ctx.nowMs()) {
    await target.store.update(profileName, (current) => ({ ...current, pendingLogin: undefined }));
    throw new MmauthError('pending_login_expired', `the login started for profile "${profileName}" expired`, {
      details: { expiresAt: pending.expiresAt, profile: profileName },
    });
  }
  // The code and the verifier go only to the server the login started at; the second step never rebinds.
  const startedAt = new URL(pending.url).origin;
  if (startedAt !== new URL(endpoints.baseUrl).origin) {
    throw new MmauthError(
      'base_url_mismatch',
      `the login of profile "${profileName}" was started at ${startedAt}; refusing to complete it at ${endpoints.baseUrl}`,
    );
  }
  const url = await completion.readUrl();
  if (url.origin === new URL(pending.url).origin && url.pathname === new URL(pending.url).pathname) {
    throw new MmauthError(
      'usage',
      'that is the authorization URL the first step printed, not the address the browser ended on after you allowed access',
      { details: { reason: 'authorization_url_given', redirectUri: pending.redirectUri } },
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
    const implicit = await import('../oauth/implicit.js');
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
      // A confidential client refused without its secret: asked on a terminal, as the one-step sign-in does (the code is not burnt).
      if (
        clientSecret !== undefined ||
        !hasErrorCode(error, 'token_endpoint_error') ||
        error.oauthError !== 'invalid_client'
      )
        throw error;
      if (completion.askSecret === undefined) {
        throw new MmauthError(
          'client_secret_required',
          `${pending.clientId} is a confidential client: the code exchange needs its secret at the second step`,
          { cause: error, details: { reason: 'second_step', clientId: pending.clientId } },
        );
      }
      notices.warn(
        `${endpoints.baseUrl} refused the exchange without a client secret: ${pending.clientId} is a confidential client`,
      );
      clientSecret = await completion.askSecret();
      response = await exchange(clientSecret);
    }
  }
  const token = toStoredToken(response, origin, ctx.nowMs(), pending.scope);
  const replaced = await storeGrant(
    { store: target.store, profileName, intent, baseUrl: endpoints.baseUrl },
    token,
    (current) => ({
      baseUrl: endpoints.baseUrl,
      clientId: pending.clientId,
      clientSecret:
        clientSecret ?? givenSecret ?? credentialsFor(current, endpoints.baseUrl, pending.clientId)?.clientSecret,
      scope: pending.scope,
      pendingLogin: undefined,
    }),
    { ...options, clientId: pending.clientId, clientSecret },
    ctx,
    notices,
  );
  const resourceOwner = await lookUpResourceOwner(target.server, token.accessToken);
  return { token, profileName, baseUrl: endpoints.baseUrl, replaced, isImplicit, resourceOwner };
}
