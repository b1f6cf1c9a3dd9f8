import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { withHelperOptions, withRenewalOptions, withTokenOptions } from './options.js';
import { quietDirectoryChoice } from '../settings/profile-selection.js';
import { usableAccessToken, type UsableTokenOptions } from '../token/usable-token.js';

/** Registers `mmauth header`; the logic is runHeader. */
export function registerHeader(program: Command, ctx: AppContext): void {
  withHelperOptions(withRenewalOptions(withTokenOptions(program.command('header'))))
    .description(
      'print "Authorization: Bearer <token>" for a valid token, renewed first when needed (exit 4 when there is none)',
    )
    .addHelpText(
      'after',
      `
How long it is good for: until its expiry, or until the next renewal on a server that rotates
refresh tokens (the first use of the new token ends this one), whichever comes first. On a 401, run
this again: it hands out the current token. More: docs/exec-and-programs.md.

Examples:
  $ mmauth header | curl -H @- https://maps.example.com/api/maps     # the token stays out of argv
  $ mmauth header --json        # {"Authorization": "Bearer …"}, a ready headers object`,
    )
    .action(async (options) => runHeader(options, ctx));
}

/**
 * Prints `Authorization: Bearer <token>` (RFC 6750 §2.1; spec §5.1) for the token runToken would
 * print; with --json `{"Authorization": "Bearer <token>"}`. Same renewal and errors as runToken.
 */
export async function runHeader(options: UsableTokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  if (options.verbose !== true) quietDirectoryChoice(ctx);
  const value = `Bearer ${(await usableAccessToken(options, ctx, (line) => out.warn(line))).accessToken}`;
  if (options.json === true) {
    // A bare map of HTTP headers, as tools consume it (an MCP headersHelper): no schema_version.
    out.json({ Authorization: value }, { bare: true });
  } else {
    out.data(`Authorization: ${value}`);
  }
}
