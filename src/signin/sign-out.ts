import type { AppContext } from '../context.js';
import type { Profile } from '../store/profile.js';
import { LOST_KEY } from '../store/credential-vault.js';
import { maskToken } from '../ui/format.js';
import { nextStep } from '../settings/next-step.js';
import type { ClientOptions } from '../settings/setting-options.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import type { GrantEnd } from '../grant/end-grant.js';
import { endCurrentGrant } from '../grant/end-current-grant.js';
import { grantEndFields, reportGrantEnd } from './grant-end-report.js';
import { resolveGrantTarget } from '../settings/grant-target.js';
import { openLocalTarget, requireProfile, resolveTarget, type LocalTarget } from '../settings/target.js';
import { revokeReplacedTokens } from '../grant/replaced-tokens.js';

/** What a sign-out is asked for: the profile and client settings, and whether to skip the server. */
export interface SignOutOptions extends ClientOptions {
  /** Forget the token without asking the server to revoke it. */
  localOnly?: boolean;
}

/** The profile without its credentials (token, refresh token, client secret, pending login): its settings stay. */
function forgetCredentials(current: Profile): Profile {
  return {
    ...current,
    token: undefined,
    clientSecret: undefined,
    pendingLogin: undefined,
    chainToRetire: undefined,
    replacedTokens: undefined,
  };
}

/** What logging one profile out did: `--json`'s document for it. */
export interface LogoutResult {
  logged_out: boolean;
  revoked: boolean;
  confirmed: boolean;
  already_invalid: boolean;
  /** How many tokens mmauth had replaced without ending were revoked now. */
  replaced_revoked: number;
  profile: string;
}

/**
 * Logs one profile out: ends its grant unless `localOnly` (endGrant: RFC 7009, confirmed; a
 * personal token is only forgotten), then `finish`es it: forgets its credentials (logout), or
 * deletes it entirely (profile remove). Says what it did on stderr; returns the result. Throws
 * what endGrant throws, keeping everything.
 */
export async function logOutProfile(
  options: SignOutOptions,
  ctx: AppContext,
  finish: (store: LocalTarget['store'], profileName: string) => Promise<unknown>,
): Promise<LogoutResult> {
  const out = await ctx.output();
  // --local-only forgets, so it works even when the stored credentials can no longer be read.
  const local = await openLocalTarget(options, ctx, { getsCredentials: options.localOnly === true });
  requireProfile(local);
  const { profileName } = local;
  const token = local.profile?.token;
  const replacedRevoked = await endReplacedTokens(options, ctx, local, out);
  if (token === undefined) {
    // Left out because its key is gone (--local-only reads with `lost: 'omit'`): stored, not usable.
    const listed = local.store.listOne(profileName);
    const hadSecret = listed?.hasClientSecret === true;
    // Lost only where the file holds a sealed credential that could not be opened.
    const isLost = listed?.token !== undefined || (hadSecret && local.profile?.clientSecret === undefined);
    await finish(local.store, profileName);
    if (isLost) {
      out.warn(
        `profile "${profileName}": its credentials are ${LOST_KEY}; forgotten here, not revoked (a token stays valid on the server until it expires)`,
      );
      out.instruct(`  run \`${nextStep(listed?.lastGrant, profileName)}\` to store them again`);
    } else if (hadSecret) {
      out.info(`Profile "${profileName}" has no stored token: nothing to revoke; forgot the client secret.`);
    } else if (replacedRevoked === 0) {
      out.info(`Profile "${profileName}" has no stored token: nothing to log out.`);
    }
    return {
      logged_out: isLost || replacedRevoked > 0,
      revoked: false,
      confirmed: false,
      already_invalid: false,
      replaced_revoked: replacedRevoked,
      profile: profileName,
    };
  }
  let result: GrantEnd | undefined;
  let revokedToken = token.accessToken;
  let baseUrl = '';
  if (options.localOnly === true) {
    out.warn(
      `not revoking ${maskToken(token.accessToken)} on the server (local only, as asked): it stays valid until it expires`,
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
    // The grant as it is when the end finishes, under the lock: no renewal races it.
    const ended = await endCurrentGrant(grant, ctx, (line) => out.info(line), stored, forgetCredentials);
    result = ended?.result;
    revokedToken = ended?.accessToken ?? token.accessToken;
    baseUrl = target.endpoints.baseUrl;
  }
  await finish(local.store, profileName);
  if (result !== undefined) reportGrantEnd(out, result, revokedToken, baseUrl);
  const fields =
    result === undefined ? { revoked: false, confirmed: false, already_invalid: false } : grantEndFields(result);
  return { logged_out: true, ...fields, replaced_revoked: replacedRevoked, profile: profileName };
}

/**
 * Ends the tokens the profile remembers as replaced and not ended (the project's rules: a client-credentials
 * renewal's old token, a re-login's over one with no refresh token), before its credentials are
 * forgotten; with --local-only they are only forgotten, said in one line. Returns how many the
 * server revoked. Throws the first revocation failure, keeping everything (as endGrant's do).
 */
async function endReplacedTokens(
  options: SignOutOptions,
  ctx: AppContext,
  local: LocalTarget,
  out: Awaited<ReturnType<AppContext['output']>>,
): Promise<number> {
  const tokens = local.profile?.replacedTokens;
  if (tokens === undefined || tokens.length === 0) return 0;
  if (options.localOnly === true) {
    out.warn(
      `not revoking ${tokens.length} earlier token(s) mmauth had replaced (local only, as asked): they stay valid until they expire`,
    );
    return 0;
  }
  const target = await resolveTarget(options, ctx);
  assertCredentialOrigin(local.profileName, target.profile, target.endpoints.baseUrl);
  const { grant } = await resolveGrantTarget(options, ctx, target);
  const { revoked, failure } = await revokeReplacedTokens(grant.server, grant.client, tokens);
  if (failure !== undefined) throw failure;
  out.info(
    `Ended ${revoked} earlier token(s) mmauth had replaced without ending (a client-credentials renewal or a new login leaves the old one to programs that may hold it): each is revoked now, or was already ended on the server (revocation answers alike, RFC 7009 §2.2).`,
  );
  return revoked;
}

/** Forgets the profile's credentials (token, refresh token, client secret, pending login, chain); its settings stay. */
export const forgetProfileCredentials = (store: LocalTarget['store'], profileName: string) =>
  store.update(profileName, forgetCredentials);
