import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { withClientOptions, withCommonOptions } from './options.js';
import { isMmauthError } from '../errors.js';
import type { LogoutResult, SignOutOptions } from '../signin/sign-out.js';

/** Options of `mmauth logout`. */
export interface LogoutOptions extends SignOutOptions {
  /** Every profile (`logout --all`). */
  all?: boolean;
}

/** Registers `mmauth logout`; the logic is runLogout. */
export function registerLogout(program: Command, ctx: AppContext): void {
  withClientOptions(withCommonOptions(program.command('logout')))
    .description(
      "revoke the profile's stored token on the server, then forget it and the stored client secret (the profile's other settings stay)",
    )
    .option(
      '--local-only',
      'forget the token without revoking it on the server (offline, or a server you cannot reach)',
    )
    .option('--all', 'log out of every profile (one result each; exit non-zero when any failed)')
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth logout
  $ mmauth logout --profile ci --local-only
  $ mmauth logout --all --json`,
    )
    .action(async (options) => runLogout(options, ctx));
}

/**
 * `mmauth logout`: logOutProfile for the selected profile, or for every profile with `all` (one
 * result each, every one attempted; the first failure is thrown after the others are done);
 * --json prints the result, or an array of them with `all`.
 */
export async function runLogout(options: LogoutOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  if (options.all === true) return runLogoutAll(options, ctx);
  const { forgetProfileCredentials, logOutProfile } = await import('../signin/sign-out.js');
  const result = await logOutProfile(options, ctx, forgetProfileCredentials);
  if (options.json === true) out.json(result);
  if (result.logged_out) {
    out.success(
      `Logged out of profile "${result.profile}": its stored secrets are forgotten, its other settings stay.`,
    );
  }
}

async function runLogoutAll(options: LogoutOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const store = await ctx.openStore();
  const { forgetProfileCredentials, logOutProfile } = await import('../signin/sign-out.js');
  const results: Array<
    LogoutResult | { profile: string; logged_out: false; error: { code: string; message: string } }
  > = [];
  let firstFailure: unknown;
  for (const profile of store.names()) {
    try {
      const result = await logOutProfile({ ...options, profile }, ctx, forgetProfileCredentials);
      results.push(result);
      if (result.logged_out) out.success(`Logged out of profile "${profile}".`);
    } catch (error) {
      firstFailure ??= error;
      const code = isMmauthError(error) ? error.code : 'unexpected';
      const message = error instanceof Error ? error.message : String(error);
      out.warn(`profile "${profile}" was not logged out: ${message}`);
      results.push({ profile, logged_out: false, error: { code, message } });
    }
  }
  if (options.json === true) out.json(results, { redact: true });
  if (results.length === 0) out.info('There are no profiles: nothing to log out.');
  if (firstFailure !== undefined) throw firstFailure;
}
