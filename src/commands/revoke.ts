import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { withClientOptions, withCommonOptions, type ClientOptions } from './options.js';
import { resolveTarget } from '../settings/target.js';

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
 * Revokes the profile's token or MMAUTH_TOKEN and proves it (endGrant: RFC 7009 §2, then token
 * info must answer 401: revokeTargetToken) before saying "revoked", then deletes the stored token (the profile's
 * settings stay). A token the server had already refused is forgotten and reported so, never as
 * revoked. --json prints `{revoked, confirmed, already_invalid, token_forgotten, profile}`. On any
 * error the stored token is kept; throws what endGrant and the settings throw.
 */
export async function runRevoke(options: ClientOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { needsStoredToken: true });
  const [{ revokeTargetToken }, { grantEndFields, reportGrantEnd }] = await Promise.all([
    import('../token/revoke-token.js'),
    import('../signin/grant-end-report.js'),
  ]);
  const { profileName } = target;
  const ended = await revokeTargetToken(target, options, ctx, (line) => out.info(line));
  if (options.json === true) {
    out.json({ ...grantEndFields(ended.result), token_forgotten: ended.isForgotten, profile: profileName });
  }
  reportGrantEnd(out, ended.result, ended.accessToken, target.endpoints.baseUrl);
  if (ended.isForgotten) {
    out.info(`  Forgot the token of profile "${profileName}"; its settings stay.`);
  }
}
