import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import type { Profile } from '../store/profile.js';
import { maskToken } from '../ui/format.js';
import { withClientOptions, withCommonOptions, type ClientOptions } from './shared/options.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { endGrant, type GrantEnd } from '../grant/end-grant.js';
import { grantEndFields, reportGrantEnd } from './shared/grant-end-report.js';
import { resolveGrantTarget } from './shared/grant-target.js';
import { openLocalTarget, requireProfile, resolveTarget } from './shared/target.js';

/** Options of `mmauth logout`. */
export interface LogoutOptions extends ClientOptions {
  /** Forget the token without asking the server to revoke it. */
  localOnly?: boolean;
}

/** The profile without its credentials (token, refresh token, client secret, pending login): its settings stay. */
function forgetCredentials(current: Profile): Profile {
  return { ...current, token: undefined, clientSecret: undefined, pendingLogin: undefined, chainToRetire: undefined };
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
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth logout
  $ mmauth logout --profile ci --local-only`,
    )
    .action(async (options) => runLogout(options, ctx));
}

/**
 * Ends the profile's grant unless `localOnly` (endGrant: RFC 7009, confirmed; a personal token is
 * only forgotten), then deletes its credentials; --json prints `{logged_out, revoked, confirmed,
 * already_invalid, profile}`.
 * Throws what runRevoke throws, keeping the token.
 */
export async function runLogout(options: LogoutOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  // --local-only forgets, so it works even when the stored credentials can no longer be read.
  const local = await openLocalTarget(options, ctx, { getsCredentials: options.localOnly === true });
  requireProfile(local);
  const { profileName } = local;
  const token = local.profile?.token;
  if (token === undefined) {
    // Listed, not read: a client secret whose key is gone (--local-only) is forgotten too.
    const hadSecrets =
      local.store.listOne(profileName)?.hasClientSecret === true || local.profile?.pendingLogin !== undefined;
    if (hadSecrets) await local.store.update(profileName, forgetCredentials);
    if (options.json === true) {
      out.json({ logged_out: false, revoked: false, confirmed: false, already_invalid: false, profile: profileName });
    }
    out.info(
      `Profile "${profileName}" has no stored token: nothing to log out${hadSecrets ? ' (its stored secrets are forgotten)' : ''}.`,
    );
    return;
  }
  let result: GrantEnd | undefined;
  let revokedToken = token.accessToken;
  let baseUrl = '';
  if (options.localOnly === true) {
    out.warn(
      `not revoking ${maskToken(token.accessToken)} on the server (--local-only): it stays valid until it expires`,
    );
  } else if (token.grant === 'personal') {
    out.warn(
      "a personal access token can only be revoked where it was created (the service's settings): it is forgotten here, and stays valid on the server until you revoke it there",
    );
  } else {
    const target = await resolveTarget(options, ctx);
    assertCredentialOrigin(profileName, target.profile, target.endpoints.baseUrl);
    const { grant, stored } = await resolveGrantTarget(options, ctx, target);
    // A failure here keeps the token; the failure map adds the --local-only way out to its hint.
    const ended = await endGrant(token, grant, ctx, (line) => out.info(line), stored);
    result = ended.result;
    revokedToken = ended.accessToken;
    baseUrl = target.endpoints.baseUrl;
  }
  await local.store.update(profileName, forgetCredentials);
  const fields =
    result === undefined ? { revoked: false, confirmed: false, already_invalid: false } : grantEndFields(result);
  if (options.json === true) out.json({ logged_out: true, ...fields, profile: profileName });
  if (result !== undefined) reportGrantEnd(out, result, revokedToken, baseUrl);
  out.success(`Logged out of profile "${profileName}": its stored secrets are forgotten, its other settings stay.`);
}
