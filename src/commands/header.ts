import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { openLocalSession, parseSeconds, requireUsableToken, withLocalOptions, type LocalOptions } from './common.js';

/** Options of `mmauth header`. */
export interface HeaderOptions extends LocalOptions {
  /** Seconds the token must still be valid for. */
  minTtl: number;
}

/** Registers `mmauth header`; the logic is runHeader. */
export function registerHeader(program: Command, ctx: AppContext): void {
  withLocalOptions(program.command('header'))
    .description('print "Authorization: Bearer <token>" for the stored token (exit 4 when there is no usable one)')
    .option('--min-ttl <seconds>', 'fail unless the token is valid for at least this many more seconds', parseSeconds(0), 0)
    .addHelpText('after', `
Examples:
  $ curl -H "$(mmauth header)" https://maps.example.com/api/maps
  $ mmauth header --json        # {"Authorization": "Bearer …"}, a ready headers object`)
    .action(async (options) => runHeader(options, ctx));
}

/**
 * Prints `Authorization: Bearer <token>` (RFC 6750 §2.1; spec §5.1) for the profile's usable token
 * or MMAUTH_TOKEN; with --json `{"Authorization": "Bearer <token>"}`. Same checks and errors as
 * runToken: AuthError (4), nothing on stdout.
 */
export async function runHeader(options: HeaderOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  let accessToken = ctx.env.MMAUTH_TOKEN?.trim();
  if (!accessToken) {
    const { profileName, profile } = await openLocalSession(options, ctx);
    accessToken = requireUsableToken(profileName, profile, ctx.nowMs(), options.minTtl).accessToken;
  }
  const value = `Bearer ${accessToken}`;
  if (options.json === true) {
    out.json({ Authorization: value });
  } else {
    out.data(`Authorization: ${value}`);
  }
}
