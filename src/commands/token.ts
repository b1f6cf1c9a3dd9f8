import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { openLocalSession, parseSeconds, requireUsableToken, tokenJson, withLocalOptions, type LocalOptions } from './common.js';

/** Options of `mmauth token`. */
export interface TokenOptions extends LocalOptions {
  /** Seconds the token must still be valid for; 0 accepts any unexpired token. */
  minTtl: number;
}

/** Registers `mmauth token`; the logic is runToken. */
export function registerToken(program: Command, ctx: AppContext): void {
  withLocalOptions(program.command('token'))
    .description('print the stored access token, bare, for scripts (exit 4 and nothing on stdout when there is no usable one)')
    .option('--min-ttl <seconds>', 'fail unless the token is valid for at least this many more seconds', parseSeconds(0), 0)
    .addHelpText('after', `
Examples:
  $ curl -H "Authorization: Bearer $(mmauth token)" https://maps.example.com/api/maps
  $ mmauth token --min-ttl 300 --profile ci || mmauth client-credentials --profile ci --json
  $ mmauth token --json`)
    .action(async (options) => runToken(options, ctx));
}

/**
 * Prints the usable access token of the profile, or MMAUTH_TOKEN when set (its lifetime is not
 * known locally, so --min-ttl does not apply to it), followed by a newline; with --json the
 * token document of `login`. Reads the store only, no network. Errors: AuthError (4) when there
 * is no token, it has expired, or less than `minTtl` s are left; nothing is printed on stdout then.
 */
export async function runToken(options: TokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const fromEnv = ctx.env.MMAUTH_TOKEN?.trim();
  if (fromEnv) {
    if (options.json === true) {
      out.json({ access_token: fromEnv, token_type: 'bearer', scope: null, expires_in: null, expires_at: null, grant: null, profile: null });
    } else {
      out.data(fromEnv);
    }
    return;
  }
  const { profileName, profile } = await openLocalSession(options, ctx);
  const nowMs = ctx.nowMs();
  const token = requireUsableToken(profileName, profile, nowMs, options.minTtl);
  if (options.json === true) {
    out.json(tokenJson(token, profileName, nowMs));
  } else {
    out.data(token.accessToken);
  }
}
