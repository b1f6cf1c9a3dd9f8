import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { AuthError } from '../errors.js';
import { UnexpectedStatusError } from '../oauth/describe-error.js';
import { requestRevocation } from '../oauth/revocation.js';
import { lookUpTokenInfo } from '../oauth/token-info.js';
import { maskToken } from '../ui/format.js';
import type { ClientCredentials } from '../oauth/peer.js';
import { openSession, requireClientId, requireToken, resolveClientSecret, withClientOptions, withCommonOptions, type ClientOptions, type Session } from './common.js';

/** Options of `mmauth revoke`. */
export type RevokeOptions = ClientOptions;

/** Registers `mmauth revoke`; the logic is runRevoke. */
export function registerRevoke(program: Command, ctx: AppContext): void {
  withClientOptions(withCommonOptions(program.command('revoke')))
    .description('revoke the stored token (or MMAUTH_TOKEN) on the server, confirm it is dead, then forget it')
    .addHelpText('after', `
Examples:
  $ mmauth revoke
  $ mmauth revoke --profile work --json`)
    .action(async (options) => runRevoke(options, ctx));
}

/**
 * Revokes a token (spec §4.4; RFC 7009 §2) and proves it: the spec's server answers 200 in every
 * case, so after the 200 token info (spec §4.3) must answer 401 before mmauth says "revoked" and
 * deletes the stored token (the profile's settings stay). A server with no token info endpoint
 * (404) gets the RFC 7009 reading of the 200, with a warning. Errors: AuthError (4) when the token
 * is still active or the server refuses (403 unauthorized_client), the stored token kept;
 * UsageError (2); NetworkError (3); ServerError (1).
 */
export async function runRevoke(options: RevokeOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { profile, profileName } = session;
  const { accessToken, stored } = requireToken(ctx, profileName, profile);
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const clientSecret = await resolveClientSecret(options, ctx, profile);
  const isConfirmed = await revokeAndConfirm(session, { clientId, clientSecret }, accessToken);
  if (stored !== undefined) {
    await session.store.update(profileName, (current) => ({ ...current, token: undefined }));
  }
  if (options.json === true) {
    out.json({ revoked: true, confirmed: isConfirmed, token_forgotten: stored !== undefined, profile: profileName });
  }
  if (!isConfirmed) {
    out.warn('the server has no token info endpoint, so the revocation could not be confirmed; it answered 200 (RFC 7009: revoked or already invalid)');
  }
  out.success(`Revoked ${maskToken(accessToken)} on ${session.endpoints.baseUrl}${isConfirmed ? ' (confirmed: token info now refuses it)' : ''}`);
  if (stored !== undefined) {
    out.info(`  Forgot the token of profile "${profileName}"; its settings stay.`);
  }
}

/**
 * Revokes `accessToken` (spec §4.4; RFC 7009 §2) and confirms it with token info (spec §4.3, which
 * must then answer 401). Resolves true when confirmed, false when the server has no token info
 * endpoint (404; RFC 7009's reading of the 200 is taken). Throws AuthError (exit 4) when the
 * server refuses or token info still accepts the token; NetworkError (3); ServerError (1).
 */
export async function revokeAndConfirm(session: Session, client: ClientCredentials, accessToken: string): Promise<boolean> {
  try {
    await requestRevocation(session.peer, client, accessToken);
  } catch (error) {
    if (error instanceof AuthError) {
      throw new AuthError(`the token was NOT revoked: ${error.message}`, { hint: error.hint ?? 'check the client id and secret', cause: error });
    }
    throw error;
  }
  try {
    const result = await lookUpTokenInfo(session.peer, accessToken);
    if (result.isActive) {
      throw new AuthError('the token was NOT revoked: the revoke endpoint answered 200 but token info still accepts the token', {
        hint: 'the server revokes only tokens of the authenticated client: check the client id and secret of this profile',
      });
    }
  } catch (error) {
    if (!(error instanceof UnexpectedStatusError && error.status === 404)) {
      throw error;
    }
    return false;
  }
  return true;
}
