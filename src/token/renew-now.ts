import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { renewalOf, renewToken } from '../grant/renewal.js';
import { pickSetting } from '../settings/settings.js';
import type { LocalTarget } from '../settings/target.js';
import type { Profile, StoredToken } from '../store/profile.js';

/**
 * Renews `profile`'s token now, whatever its remaining lifetime: renewToken (RFC 6749 §6 with its
 * refresh token, or §4.4 for a client credentials profile with a secret at hand), stored under the
 * lock, each request bounded by `timeoutSeconds`. Throws `base_url_mismatch` when MMAUTH_BASE_URL
 * names another server, `not_logged_in` without a stored token, `not_renewable` (saying why) when
 * it cannot be renewed, and what renewToken throws.
 */
export async function renewProfileNow(
  local: LocalTarget,
  profile: Profile,
  options: { timeoutSeconds: number; trace: ((line: string) => void) | undefined },
  ctx: AppContext,
): Promise<StoredToken> {
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
  return renewToken(token, { profileName, store: local.store, ...options }, ctx);
}
