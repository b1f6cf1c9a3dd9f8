import type { AppContext } from '../context.js';
import { givenToken } from '../settings/given-token.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { isFresh, renewalOf } from '../grant/renewal.js';
import type { TokenInfo } from '../oauth/parse.js';
import { requireTokenInfo } from '../oauth/token-info.js';
import type { Target } from '../settings/target.js';
import { selectAccessToken } from './access-token.js';
import { usableAccessToken } from './usable-token.js';

/**
 * What token info (spec §4.3) says of `target`'s token (MMAUTH_TOKEN, else the profile's). A stored
 * token that is stale and can be renewed is renewed first (usableAccessToken, the request bounded
 * by `timeout` seconds; `warn` gets its notices) unless `renew` is false, so that the answer is
 * about the token `token` would hand out. Resolves with the token asked about and the answer;
 * throws `base_url_mismatch` for a server that is not the token's, `token_inactive` for a token
 * the server refuses, and what the renewal throws.
 */
export async function askTokenInfo(
  target: Target,
  options: { renew?: boolean | undefined; timeout: number; verbose?: boolean | undefined },
  ctx: AppContext,
  warn: (line: string) => void,
): Promise<{ accessToken: string; info: TokenInfo }> {
  const { profile } = target;
  const stored = profile?.token;
  const isStale = stored !== undefined && !isFresh(stored, ctx.nowMs(), 0);
  const canRenew = profile !== undefined && renewalOf(profile, ctx.env) !== 'none';
  let asked = target;
  if (options.renew !== false && givenToken(ctx.env) === undefined && isStale && canRenew) {
    assertCredentialOrigin(target.profileName, profile, target.endpoints.baseUrl);
    const renewal = { profile: target.profileName, minTtl: 0, renew: true, timeout: options.timeout };
    const verbose = options.verbose === undefined ? {} : { verbose: options.verbose };
    const renewed = await usableAccessToken({ ...renewal, ...verbose }, ctx, warn);
    // The renewal wrote the new pair; ask about it without reading the profile again.
    asked = { ...target, profile: { ...profile, token: renewed.stored } };
  }
  const { accessToken } = selectAccessToken(ctx, asked.profileName, asked.profile, asked.endpoints.baseUrl);
  return { accessToken, info: await requireTokenInfo(asked.server, accessToken) };
}
