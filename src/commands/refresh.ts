import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { reportToken } from '../ui/token-report.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { MAX_TIMER_SECONDS, parseSeconds, withLocalOptions, type LocalOptions } from './options.js';
import { renewalOf, renewToken } from '../grant/renewal.js';
import { pickSetting, traceFor } from '../settings/settings.js';
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
 * Renews the profile's token now (renewToken: RFC 6749 §6 with its refresh token, or §4.4 for a
 * client credentials profile with a secret at hand) and reports it as `login` does (--json: the
 * same document). Throws `token_expired` with the next step when the profile cannot be renewed,
 * and what renewToken throws.
 */
export async function runRefresh(options: RefreshOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const local = await openLocalTarget(options, ctx);
  const profile = requireProfile(local);
  const { profileName } = local;
  assertCredentialOrigin(profileName, profile, pickSetting(undefined, ctx.env.MMAUTH_BASE_URL, undefined));
  const token = profile.token;
  if (token === undefined)
    throw new MmauthError('not_logged_in', `profile "${profileName}" has no stored token: nothing to refresh`);
  if (renewalOf(profile, ctx.env) === 'none') {
    const why =
      token.grant === 'client_credentials'
        ? 'a client credentials token renews only with the client secret, and none is stored or in MMAUTH_CLIENT_SECRET'
        : `${token.grant === 'personal' ? 'a personal access' : token.grant === 'implicit' ? 'an implicit-flow' : 'a code-flow'} token without a refresh token cannot be renewed`;
    throw new MmauthError('not_renewable', `the token of profile "${profileName}" cannot be renewed: ${why}`);
  }
  const trace = await traceFor(options, ctx);
  const renewal = { profileName, store: local.store, timeoutSeconds: options.timeout, trace };
  const renewed = await renewToken(token, renewal, ctx);
  const headline = `Renewed the token of profile "${profileName}" on ${profile.baseUrl ?? ''}`;
  reportToken(out, renewed, profileName, ctx.nowMs(), options.json === true, headline);
}
