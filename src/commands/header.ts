import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { selectAccessToken } from './shared/access-token.js';
import { withTokenOptions, type TokenOptions } from './shared/options.js';
import { pickSetting } from './shared/settings.js';
import { openLocalTarget, requireProfile } from './shared/target.js';

/** Registers `mmauth header`; the logic is runHeader. */
export function registerHeader(program: Command, ctx: AppContext): void {
  withTokenOptions(program.command('header'))
    .description('print "Authorization: Bearer <token>" for the stored token (exit 4 when there is no usable one)')
    .addHelpText(
      'after',
      `
Examples:
  $ curl -H "$(mmauth header)" https://maps.example.com/api/maps
  $ mmauth header --json        # {"Authorization": "Bearer …"}, a ready headers object`,
    )
    .action(async (options) => runHeader(options, ctx));
}

/**
 * Prints `Authorization: Bearer <token>` (RFC 6750 §2.1; spec §5.1) for the token runToken would
 * print; with --json `{"Authorization": "Bearer <token>"}`. Same errors as runToken.
 */
export async function runHeader(options: TokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const local = await openLocalTarget(options, ctx);
  if (!ctx.env.MMAUTH_TOKEN?.trim()) requireProfile(local);
  const { profileName, profile } = local;
  const baseUrl = pickSetting(undefined, ctx.env.MMAUTH_BASE_URL, undefined);
  const value = `Bearer ${selectAccessToken(ctx, profileName, profile, baseUrl, options.minTtl).accessToken}`;
  if (options.json === true) {
    out.json({ Authorization: value });
  } else {
    out.data(`Authorization: ${value}`);
  }
}
