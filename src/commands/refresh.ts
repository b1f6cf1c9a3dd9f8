import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { reportToken } from '../ui/token-report.js';
import { MAX_TIMER_SECONDS, parseSeconds, withLocalOptions, type LocalOptions } from './options.js';
import { traceFor } from '../settings/settings.js';
import { openLocalTarget, requireProfile } from '../settings/target.js';

/** Options of `mmauth refresh`. */
export interface RefreshOptions extends LocalOptions {
  /** Seconds, for the renewal request. */
  timeout: number;
}

/** Registers `mmauth refresh`; the logic is runRefresh. */
export function registerRefresh(program: Command, ctx: AppContext): void {
  withLocalOptions(program.command('refresh'))
    .description(
      "renew the profile's token now, whatever its remaining lifetime (refresh token, or client credentials)",
    )
    .option('--timeout <seconds>', 'bound on the renewal request', parseSeconds(1, MAX_TIMER_SECONDS), 30)
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth refresh
  $ mmauth refresh --profile ci --json`,
    )
    .action(async (options) => runRefresh(options, ctx));
}

/**
 * Renews the profile's token now (renewProfileNow: RFC 6749 §6 with its refresh token, or §4.4 for a
 * client credentials profile with a secret at hand) and reports it as `login` does (--json: the
 * same document). Throws what requireProfile and renewProfileNow throw (`not_renewable` saying
 * why the profile cannot be renewed).
 */
export async function runRefresh(options: RefreshOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const local = await openLocalTarget(options, ctx);
  const profile = requireProfile(local);
  const { profileName } = local;
  const trace = await traceFor(options, ctx);
  const { renewProfileNow } = await import('../token/renew-now.js');
  const renewed = await renewProfileNow(local, profile, { timeoutSeconds: options.timeout, trace }, ctx);
  const headline = `Renewed the token of profile "${profileName}" on ${profile.baseUrl ?? ''}`;
  reportToken(out, renewed, profileName, ctx.nowMs(), options.json === true, headline);
}
