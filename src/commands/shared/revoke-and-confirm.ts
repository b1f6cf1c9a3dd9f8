import { hasErrorCode, MmauthError } from '../../errors.js';
import { requestRevocation } from '../../oauth/revocation.js';
import type { ClientAuthentication, ServerConfiguration } from '../../oauth/server-configuration.js';
import { lookUpTokenInfo } from '../../oauth/token-info.js';
import type { StoredToken } from '../../store/profile.js';
import type { ProfileStore } from '../../store/profile-store.js';
import { judgeStoredToken } from '../../store/token-state.js';
import type { AppContext } from '../../context.js';
import { renewToken } from './renewal.js';

/**
 * What a revocation proved: `confirmed`, token info accepted the token before and refuses it after;
 * `unconfirmed`, the server has no token info endpoint (404; RFC 7009's reading of the 200);
 * `already_inactive`, token info refused it before (expired or revoked): nothing live was revoked.
 */
export type RevocationResult = 'confirmed' | 'unconfirmed' | 'already_inactive';

/**
 * Revokes `accessToken` (RFC 7009 §2; spec §4.4) between two token info look-ups (spec §4.3). A
 * public client (no secret) sends `client_id` alone. Throws `revocation_error` when the server
 * refuses, `revocation_not_confirmed` when token info still accepts the token after, and
 * `client_secret_required` for either without a secret.
 */
export async function revokeAndConfirm(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<RevocationResult> {
  try {
    return await revokeThenLook(server, client, accessToken);
  } catch (error) {
    throw client.clientSecret === undefined && isRefusal(error) ? secretRequired(error) : error;
  }
}

/** A refusal that, for a client that sent no secret, means the token's client is confidential. */
function isRefusal(error: unknown): boolean {
  if (hasErrorCode(error, 'revocation_not_confirmed')) return true;
  return (
    hasErrorCode(error, 'revocation_error') &&
    ['unauthorized_client', 'invalid_client'].includes(error.oauthError ?? '')
  );
}

function secretRequired(cause: unknown): MmauthError {
  return new MmauthError(
    'client_secret_required',
    'the token was NOT revoked: its client is confidential, and revoking it needs the client secret',
    {
      cause,
      hint: 'give it with MMAUTH_CLIENT_SECRET, --client-secret-file PATH or --client-secret-stdin',
    },
  );
}

/** Whether token info accepts the token; undefined when the server has no token info endpoint (404). */
async function isActiveOrUnknown(server: ServerConfiguration, accessToken: string): Promise<boolean | undefined> {
  try {
    return (await lookUpTokenInfo(server, accessToken)).isActive;
  } catch (error) {
    if (hasErrorCode(error, 'unexpected_status') && error.status === 404) return undefined;
    throw error;
  }
}

async function revokeThenLook(
  server: ServerConfiguration,
  client: ClientAuthentication,
  accessToken: string,
): Promise<RevocationResult> {
  const wasActive = await isActiveOrUnknown(server, accessToken);
  await requestRevocation(server, client, accessToken);
  if (wasActive === false) return 'already_inactive';
  const isActive = await isActiveOrUnknown(server, accessToken);
  if (isActive === undefined) return 'unconfirmed';
  if (isActive) {
    const message =
      'the token was NOT revoked: the revoke endpoint answered 200 but token info still accepts the token';
    throw new MmauthError('revocation_not_confirmed', message);
  }
  return 'confirmed';
}

/** What ending a stored grant needs: the profile, its store, and the transport. */
export interface GrantTarget {
  profileName: string;
  store: ProfileStore;
  server: ServerConfiguration;
  timeoutSeconds: number;
}

/**
 * Ends the grant of a stored token (RFC 7009): an expired access token with a refresh token is
 * first renewed (Doorkeeper 5.5 ignores the revocation of an expired access token's record, so its
 * refresh token would live on), and revokeAndConfirm's token info look-up uses the new access token
 * once, which retires the previous refresh token; then the access token is revoked, which ends its
 * pair, and the refresh token too, with `token_type_hint`. `onNote` says what was done beyond that.
 */
export async function revokeStoredGrant(
  stored: StoredToken,
  target: GrantTarget,
  client: ClientAuthentication,
  ctx: AppContext,
  onNote: (line: string) => void,
): Promise<{ result: RevocationResult; accessToken: string }> {
  let token = stored;
  if (token.refreshToken !== undefined && judgeStoredToken(token, ctx.nowMs()) === 'expired') {
    token = await renewToken(
      token,
      { profileName: target.profileName, store: target.store, timeoutSeconds: target.timeoutSeconds },
      ctx,
    );
    onNote('the access token had expired: renewed it first, so that revoking it ends the grant and its refresh token');
  }
  const result = await revokeAndConfirm(target.server, client, token.accessToken);
  if (token.refreshToken !== undefined) {
    // The server ended the pair with its access token; asking again for the refresh token costs one request.
    await requestRevocation(target.server, client, token.refreshToken, 'refresh_token').catch((error: unknown) => {
      onNote(`the refresh token's own revocation failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
  return { result, accessToken: token.accessToken };
}
