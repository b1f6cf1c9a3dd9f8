import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { maskToken } from '../ui/format.js';
import { profileFlag } from './shared/next-step.js';
import { selectAccessToken } from './shared/access-token.js';
import { withClientOptions, withCommonOptions, type ClientOptions } from './shared/options.js';
import { revokeAndConfirm, revokeStoredGrant } from './shared/revoke-and-confirm.js';
import { findClientSecret, requireClientId } from './shared/settings.js';
import { resolveTarget } from './shared/target.js';

/** Registers `mmauth revoke`; the logic is runRevoke. */
export function registerRevoke(program: Command, ctx: AppContext): void {
  withClientOptions(withCommonOptions(program.command('revoke')))
    .description('revoke the stored token (or MMAUTH_TOKEN) on the server, confirm it is dead, then forget it')
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth revoke
  $ mmauth revoke --profile work --json`,
    )
    .action(async (options) => runRevoke(options, ctx));
}

/**
 * Revokes the profile's token or MMAUTH_TOKEN and proves it (revokeAndConfirm: RFC 7009 §2, then
 * token info must answer 401) before saying "revoked" and deleting the stored token (the profile's
 * settings stay). --json prints `{revoked, confirmed, token_forgotten, profile}`. On any error the
 * stored token is kept; throws what revokeAndConfirm and the settings throw.
 */
export async function runRevoke(options: ClientOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { needsStoredToken: true });
  const { profile, profileName } = target;
  const { accessToken, stored } = selectAccessToken(ctx, profileName, profile, target.endpoints.baseUrl);
  if (stored?.grant === 'personal') {
    throw new MmauthError(
      'personal_token',
      "a personal access token can only be revoked where it was created (the service's settings)",
      {
        hint: `\`mmauth logout${profileFlag(profileName)}\` forgets it here`,
      },
    );
  }
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const clientSecret = await findClientSecret(options, ctx, target);
  const client = { clientId, clientSecret };
  const grant = { profileName, store: target.store, server: target.server, timeoutSeconds: options.timeout };
  const { result } =
    stored === undefined
      ? { result: await revokeAndConfirm(target.server, client, accessToken) }
      : await revokeStoredGrant(stored, grant, client, ctx, (line) => out.info(line));
  if (stored !== undefined) {
    await target.store.update(profileName, (current) => ({ ...current, token: undefined }));
  }
  if (options.json === true) {
    const confirmed = result === 'confirmed';
    out.json({ revoked: true, confirmed, token_forgotten: stored !== undefined, profile: profileName });
  }
  if (result === 'unconfirmed') {
    out.warn(
      'the server has no token info endpoint, so the revocation could not be confirmed; it answered 200 (RFC 7009: revoked or already invalid)',
    );
  }
  if (result === 'already_inactive') {
    out.warn(
      'token info already refused the token before the revocation (expired or revoked): nothing live was revoked',
    );
  }
  const proof = result === 'confirmed' ? ' (confirmed: token info now refuses it)' : '';
  out.success(`Revoked ${maskToken(accessToken)} on ${target.endpoints.baseUrl}${proof}`);
  if (stored !== undefined) {
    out.info(`  Forgot the token of profile "${profileName}"; its settings stay.`);
  }
}
