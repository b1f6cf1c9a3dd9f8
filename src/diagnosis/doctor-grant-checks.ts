import type { AppContext } from '../context.js';
import { renewalOf } from '../grant/renewal.js';
import { createAuthorizationRequest } from '../oauth/authorization-code.js';
import { probeAuthorizationEndpoint } from '../oauth/authorization-probe.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';
import { callbackPathOf } from '../settings/callback-path-clash.js';
import { DEFAULT_CALLBACK_PATH } from '../settings/redirect-uri.js';
import { checkClientCredentials } from '../oauth/introspection.js';
import { lookUpTokenInfo } from '../oauth/token-info.js';
import type { Profile } from '../store/profile.js';
import { judgeStoredToken } from '../store/token-state.js';
import { formatDuration } from '../ui/format.js';
import { fail, ok, skip, warn, why, type Check } from './doctor-checks.js';
import { nextStep } from '../settings/next-step.js';

/** Whether the profile gets its tokens without the authorization endpoint (client credentials, a personal token). */
function skipsAuthorization(profile: Profile | undefined): boolean {
  const grant = profile?.token?.grant ?? profile?.lastGrant;
  return grant === 'client_credentials' || grant === 'personal';
}

/**
 * The redirect URI the profile's login would send: its fixed one, else 127.0.0.1 on a port the
 * system picks (RFC 8252 §7.3) with the profile's own callback path (its `callback_path`).
 */
async function loginRedirectUri(profile: Profile | undefined): Promise<string> {
  if (profile?.redirectUri !== undefined) return profile.redirectUri;
  const { createServer } = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(49152));
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 49152));
    });
  });
  return `http://127.0.0.1:${port}${profile === undefined ? DEFAULT_CALLBACK_PATH : callbackPathOf(profile)}`;
}

/**
 * The authorization endpoint accepts the profile's client id and redirect URI as its login would
 * send them (the login probe); `skip` for a profile that gets its tokens without it.
 */
export async function checkAuthorization(
  server: ServerConfiguration,
  profile: Profile | undefined,
  clientId: string | undefined,
  scope: string,
): Promise<Check> {
  if (skipsAuthorization(profile)) {
    return skip('authorization', `not used by this profile (${profile?.token?.grant ?? profile?.lastGrant} tokens)`);
  }
  if (clientId === undefined)
    return warn('authorization', 'no client id to check', 'pass --client-id or set MMAUTH_CLIENT_ID');
  const redirectUri = await loginRedirectUri(profile);
  try {
    const request = await createAuthorizationRequest(server.endpoints, { clientId, redirectUri, scope });
    await probeAuthorizationEndpoint(server, request.url);
    return ok('authorization', `client ${clientId} with ${redirectUri} is accepted`);
  } catch (error) {
    return fail(
      'authorization',
      why(error),
      `check the client id (--client-id or MMAUTH_CLIENT_ID), and that its app registration allows ${redirectUri} and scope "${scope}"`,
    );
  }
}

/**
 * The client secret, proven by one introspection request (checkClientCredentials; RFC 7662, which
 * Doorkeeper 5.5 serves and authenticates the client at): refused fails with the fix; a server
 * without introspection (404) or a client with no secret at hand is skipped with the reason.
 */
export async function checkClientSecret(
  server: ServerConfiguration,
  clientId: string | undefined,
  clientSecret: string | undefined,
): Promise<Check> {
  if (clientId === undefined || clientSecret === undefined)
    return skip('client secret', 'no client secret to check (a public client, or none stored)');
  try {
    const result = await checkClientCredentials(server, { clientId, clientSecret });
    if (result === 'no_introspection')
      return skip('client secret', 'the server has no introspection endpoint (404) to prove it with');
    if (result === 'refused')
      return fail(
        'client secret',
        `the server refuses client ${clientId} with this secret (invalid_client)`,
        'set the current secret: MMAUTH_CLIENT_SECRET, or mmauth login --client-secret-file FILE (or client-credentials) to store it',
      );
    return ok('client secret', `accepted for client ${clientId} (introspection)`);
  } catch (error) {
    return warn('client secret', `could not be checked: ${why(error)}`, 'see the checks above');
  }
}

/** What doctor says of a shared token (the server hands back the token it holds), added to the token check. */
const SHARED_NOTE =
  "; shared: the server hands back the token it already holds when asked for a new one (Doorkeeper's reuse_access_token), so mmauth renews it once it expires and a logout ends it for every holder";

/**
 * The stored token, asked of token info (never renewed, no refresh token spent: the project's rules):
 * active with its lifetime and scopes; a token the server refuses while its expiry says valid
 * fails ("ended on the server"), its fix `mmauth refresh`, which renews or says to log in.
 */
export async function checkStoredToken(
  server: ServerConfiguration,
  profile: Profile | undefined,
  profileName: string,
  ctx: AppContext,
  isSecretAccepted = true,
): Promise<Check> {
  const check = await storedTokenCheck(server, profile, profileName, ctx, isSecretAccepted);
  // A shared token is named so whatever its state (active, expired, ended early: that line says it already).
  const isShared = profile?.token?.isShared === true && !check.detail.includes('reuse_access_token');
  return isShared ? { ...check, detail: `${check.detail}${SHARED_NOTE}` } : check;
}

/** checkStoredToken without the shared token's note. */
async function storedTokenCheck(
  server: ServerConfiguration,
  profile: Profile | undefined,
  profileName: string,
  ctx: AppContext,
  isSecretAccepted = true,
): Promise<Check> {
  const token = profile?.token;
  if (profile === undefined || token === undefined)
    return warn('token', 'none stored', `${nextStep(profile?.lastGrant, profileName)} (or mmauth client-credentials)`);
  const renewal = renewalOf(profile, ctx.env);
  const renews = renewal.replace('_', ' ');
  try {
    const result = await lookUpTokenInfo(server, token.accessToken);
    if (!result.isActive) {
      const isExpired = judgeStoredToken(token, ctx.nowMs()) === 'expired';
      if (!isExpired) {
        const fix =
          renewal === 'none'
            ? nextStep(profile.lastGrant, profileName)
            : `mmauth refresh${profileName === 'default' ? '' : ` --profile ${profileName}`} (renews, or says to sign in again)`;
        // A shared token (the server handed it back on renewal: Doorkeeper's reuse_access_token)
        // ended early: another holder's logout or revoke ended it for every holder.
        if (token.isShared === true) {
          return fail(
            'token',
            `ended on the server before its expiry: token info refuses it. This server shares one token among the holders of client id ${profile.clientId ?? '(this one)'} (it hands back the token already held: Doorkeeper's reuse_access_token), so another holder's logout or revoke ended it for every holder`,
            `${fix}; on runners that share the token, end jobs with mmauth logout --local-only (or no logout) (docs: "Fleets and CI runners" in exec-and-programs.md)`,
          );
        }
        // A client-credentials token ended early: most likely another holder of the same client id
        // signed in on a server that revokes a client's previous token (Doorkeeper's
        // revoke_previous_client_credentials_token), as CI runners sharing one client do.
        if (token.grant === 'client_credentials') {
          return fail(
            'token',
            `ended on the server before its expiry: token info refuses it. A server that revokes a client's previous token on each new one (Doorkeeper's revoke_previous_client_credentials_token) does this when another holder of client id ${profile.clientId ?? '(this one)'} gets a token: another runner, machine or script sharing the client`,
            `${fix}; for runners that share the client, give each its own client id, or share one token through mmauth agent (docs: "Fleets and CI runners" in exec-and-programs.md)`,
          );
        }
        return fail('token', 'ended on the server: token info refuses it though its expiry says valid', fix);
      }
      if (renewal === 'none')
        return fail('token', 'expired; it cannot be renewed', nextStep(profile.lastGrant, profileName));
      // A renewal works only with a secret the server accepts: say so only when that check proved it.
      if (renewal === 'client_credentials' && isSecretAccepted)
        return ok('token', 'expired; the next token, header or api gets a new one with the client secret');
      if (renewal === 'client_credentials')
        return warn(
          'token',
          'expired; whether the client secret still gets a new one cannot be told here (it could not be checked above)',
          `mmauth refresh${profileName === 'default' ? '' : ` --profile ${profileName}`} (gets a new one, or says why not)`,
        );
      // Token info and introspection judge the expired record alike for a live and an ended grant.
      return warn(
        'token',
        'expired; whether the server still honours its refresh token cannot be told without spending it',
        `mmauth refresh${profileName === 'default' ? '' : ` --profile ${profileName}`} (renews, or says to sign in again)`,
      );
    }
    const left =
      result.info.expiresInSeconds === null ? 'no expiry' : `${formatDuration(result.info.expiresInSeconds)} left`;
    return ok('token', `active, ${left}, scopes ${result.info.scopes.join(' ') || '(none)'}, renews with: ${renews}`);
  } catch (error) {
    return warn('token', `token info could not be asked: ${why(error)}`, 'see the checks above');
  }
}
