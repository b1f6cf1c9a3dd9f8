import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { tokenJson } from '../ui/token-report.js';
import { selectAccessToken } from './shared/access-token.js';
import { withTokenOptions, type TokenOptions } from './shared/options.js';
import { pickSetting } from './shared/settings.js';
import { openLocalTarget, requireProfile } from './shared/target.js';

/** Registers `mmauth token`; the logic is runToken. */
export function registerToken(program: Command, ctx: AppContext): void {
  withTokenOptions(program.command('token'))
    .description(
      'print the stored access token, bare, for scripts (exit 4 and nothing on stdout when there is no usable one)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ curl -H "Authorization: Bearer $(mmauth token)" https://maps.example.com/api/maps
  $ mmauth token --min-ttl 300 --profile ci || mmauth client-credentials --profile ci --json
  $ mmauth token --json`,
    )
    .action(async (options) => runToken(options, ctx));
}

/**
 * Prints the profile's usable access token, or MMAUTH_TOKEN when set (selectAccessToken), and a
 * newline; with --json the token document of `login` (nulls for MMAUTH_TOKEN, whose details are
 * unknown). Reads the store only, no network. Throws `not_logged_in`, `token_expired`,
 * `token_lifetime_too_short`; nothing is printed on stdout then.
 */
export async function runToken(options: TokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const local = await openLocalTarget(options, ctx);
  if (!ctx.env.MMAUTH_TOKEN?.trim()) requireProfile(local);
  const { profileName, profile } = local;
  const baseUrl = pickSetting(undefined, ctx.env.MMAUTH_BASE_URL, undefined);
  const { accessToken, stored } = selectAccessToken(ctx, profileName, profile, baseUrl, options.minTtl);
  if (options.json !== true) {
    out.data(accessToken);
  } else if (stored === undefined) {
    out.json({
      access_token: accessToken,
      token_type: 'bearer',
      scope: null,
      expires_in: null,
      expires_at: null,
      grant: null,
      profile: null,
    });
  } else {
    out.json(tokenJson(stored, profileName, ctx.nowMs()));
  }
}
