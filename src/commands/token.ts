import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { resolveUsableToken, tokenJson, withUsableTokenOptions, type UsableTokenOptions } from './common.js';

/** Options of `mmauth token`. */
export type TokenOptions = UsableTokenOptions;

/** Registers `mmauth token`; the logic is runToken. */
export function registerToken(program: Command, ctx: AppContext): void {
  withUsableTokenOptions(program.command('token'))
    .description('print the stored access token, bare, for scripts (exit 4 and nothing on stdout when there is no usable one)')
    .addHelpText('after', `
Examples:
  $ curl -H "Authorization: Bearer $(mmauth token)" https://maps.example.com/api/maps
  $ mmauth token --min-ttl 300 --profile ci || mmauth client-credentials --profile ci --json
  $ mmauth token --json`)
    .action(async (options) => runToken(options, ctx));
}

/**
 * Prints the usable access token of the profile, or MMAUTH_TOKEN when set (resolveUsableToken),
 * followed by a newline; with --json the token document of `login` (nulls for MMAUTH_TOKEN, whose
 * details are unknown). Reads the store only, no network. Errors: AuthError (4) when there is no
 * token, it has expired, or less than `minTtl` s are left; nothing is printed on stdout then.
 */
export async function runToken(options: TokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { accessToken, stored, profileName } = await resolveUsableToken(options, ctx);
  if (options.json !== true) {
    out.data(accessToken);
  } else if (stored === undefined) {
    out.json({ access_token: accessToken, token_type: 'bearer', scope: null, expires_in: null, expires_at: null, grant: null, profile: null });
  } else {
    out.json(tokenJson(stored, profileName, ctx.nowMs()));
  }
}
