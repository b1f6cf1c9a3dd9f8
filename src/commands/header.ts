import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { resolveUsableToken, withUsableTokenOptions, type UsableTokenOptions } from './common.js';

/** Options of `mmauth header`. */
export type HeaderOptions = UsableTokenOptions;

/** Registers `mmauth header`; the logic is runHeader. */
export function registerHeader(program: Command, ctx: AppContext): void {
  withUsableTokenOptions(program.command('header'))
    .description('print "Authorization: Bearer <token>" for the stored token (exit 4 when there is no usable one)')
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
  const value = `Bearer ${(await resolveUsableToken(options, ctx)).accessToken}`;
  if (options.json === true) {
    out.json({ Authorization: value });
  } else {
    out.data(`Authorization: ${value}`);
  }
}
