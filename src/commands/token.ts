import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { tokenJson } from '../ui/token-report.js';
import { withHelperOptions, withRenewalOptions, withTokenOptions } from './options.js';
import { quietDirectoryChoice } from '../settings/profile-selection.js';
import { usableAccessToken, type UsableTokenOptions } from '../token/usable-token.js';

/** Registers `mmauth token`; the logic is runToken. */
export function registerToken(program: Command, ctx: AppContext): void {
  withHelperOptions(withRenewalOptions(withTokenOptions(program.command('token'))))
    .description(
      'print a valid access token, bare, for scripts: renewed first when it is about to expire (exit 4 and nothing on stdout when there is none)',
    )
    .addHelpText(
      'after',
      `
How long it is good for: until its expiry, or until the next renewal on a server that rotates
refresh tokens (the first use of the new token ends this one), whichever comes first. On a 401, run
this again: it hands out the current token. More: docs/exec-and-programs.md.

Examples:
  $ mmauth header | curl -H @- https://maps.example.com/api/maps
  $ TOKEN=$(mmauth token --profile ci)
  $ mmauth token --min-ttl 300 --json
  $ mmauth token --no-renew          # never touch the network
  $ mmauth token --min-ttl 360 --deadline 8 --verify   # as another tool's token command (docs/helper-contract.md)`,
    )
    .action(async (options) => runToken(options, ctx));
}

/**
 * Prints the profile's access token, renewed first when stale (usableAccessToken), or MMAUTH_TOKEN
 * when set, and a newline; with --json the token document of `login` (nulls for MMAUTH_TOKEN).
 * A fresh token costs no request. Throws what usableAccessToken throws; nothing on stdout then.
 */
export async function runToken(options: UsableTokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  if (options.verbose !== true) quietDirectoryChoice(ctx);
  const { accessToken, stored, profileName } = await usableAccessToken(options, ctx, (line) => out.warn(line));
  if (options.json !== true) {
    out.data(accessToken);
  } else if (stored === undefined) {
    const unknown = { scope: null, expires_in: null, expires_at: null, grant: null, profile: null };
    out.json({ access_token: accessToken, token_type: 'bearer', ...unknown });
  } else {
    out.json(tokenJson(stored, profileName, ctx.nowMs()));
  }
}
