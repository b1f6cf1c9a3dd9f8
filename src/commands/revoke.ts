import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { profileFlag } from '../settings/next-step.js';
import { selectAccessToken } from '../token/access-token.js';
import { withClientOptions, withCommonOptions, type ClientOptions } from './options.js';
import { endGrant, revokeAndConfirm } from '../grant/end-grant.js';
import { grantEndFields, reportGrantEnd } from '../signin/grant-end-report.js';
import { resolveGrantTarget } from '../settings/grant-target.js';
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
 * info must answer 401) before saying "revoked", then deletes the stored token (the profile's
 * settings stay). A token the server had already refused is forgotten and reported so, never as
 * revoked. --json prints `{revoked, confirmed, already_invalid, token_forgotten, profile}`. On any
 * error the stored token is kept; throws what endGrant and the settings throw.
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
  const { grant, stored: where } = await resolveGrantTarget(options, ctx, target);
  const note = (line: string) => out.info(line);
  const { result, accessToken: revoked } =
    stored === undefined
      ? { result: await revokeAndConfirm(target.server, grant.client, accessToken), accessToken }
      : await endGrant(stored, grant, ctx, note, where);
  if (stored !== undefined) {
    await target.store.update(profileName, (current) => ({ ...current, token: undefined, chainToRetire: undefined }));
  }
  if (options.json === true) {
    out.json({ ...grantEndFields(result), token_forgotten: stored !== undefined, profile: profileName });
  }
  reportGrantEnd(out, result, revoked, target.endpoints.baseUrl);
  if (stored !== undefined) {
    out.info(`  Forgot the token of profile "${profileName}"; its settings stay.`);
  }
}
