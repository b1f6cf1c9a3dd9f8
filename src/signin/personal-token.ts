import type { AppContext } from '../context.js';
import { assertMayStore, credentialsFor } from '../grant/credential-binding.js';
import { requireTokenInfo } from '../oauth/token-info.js';
import type { CommonOptions } from '../settings/setting-options.js';
import { resolveTarget } from '../settings/target.js';
import type { StoredToken } from '../store/profile.js';
import { prepareStoring, type StorageOptions } from './credential-storage.js';
import { storeGrant } from './replaced-grant.js';
import type { SignedIn } from './sign-in.js';
import type { PlanNotices } from './sign-in-plan.js';

/** What storing a personal access token is asked for. */
export interface PersonalTokenOptions extends CommonOptions, StorageOptions {
  /** false: store it without asking token info. */
  verify: boolean;
  /** Replace a client token or another server's credentials. */
  replace?: boolean;
}

/** A personal access token's sign-in, prepared: where it goes, and `store` to verify and store it. */
export interface PreparedPersonalToken {
  profileName: string;
  baseUrl: string;
  /**
   * Asks token info about `accessToken` unless `verify` is false (spec §4.3; its scopes and
   * lifetime are stored), stores it with origin `personal` and ends the grant it
   * replaced (storeGrant). Throws `token_inactive` when token info refuses it (nothing stored), store and
   * network errors.
   */
  store(accessToken: string): Promise<SignedIn>;
}

/**
 * Prepares storing a personal access token (spec §1, §5.2) in the selected profile: the target
 * resolved, the profile checked to take it (assertMayStore: a client's or another server's grant
 * only with `replace`) and where its credentials go (prepareStoring), all before the token is read.
 * Throws settings, store and keyring errors.
 */
export async function preparePersonalToken(
  options: PersonalTokenOptions,
  ctx: AppContext,
  notices: PlanNotices & { info(line: string): void },
): Promise<PreparedPersonalToken> {
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profileName } = target;
  assertMayStore(profileName, target.profile, endpoints.baseUrl, 'personal', options.replace === true);
  const intent = await prepareStoring(options, target.store, profileName, notices);
  const store = async (accessToken: string): Promise<SignedIn> => {
    const nowMs = ctx.nowMs();
    let token: StoredToken = {
      accessToken,
      tokenType: 'bearer',
      scope: undefined,
      grant: 'personal',
      obtainedAt: new Date(nowMs).toISOString(),
      expiresAt: undefined,
    };
    if (options.verify) {
      const info = await requireTokenInfo(target.server, accessToken);
      token = {
        ...token,
        scope: info.scopes.length === 0 ? undefined : info.scopes.join(' '),
        expiresAt:
          info.expiresInSeconds === null ? undefined : new Date(nowMs + info.expiresInSeconds * 1000).toISOString(),
      };
    }
    const replaced = await storeGrant(
      { store: target.store, profileName, intent, baseUrl: endpoints.baseUrl },
      token,
      (current) => ({
        baseUrl: endpoints.baseUrl,
        clientSecret: credentialsFor(current, endpoints.baseUrl)?.clientSecret,
      }),
      // No client of its own: the replaced grant is ended with its own client ('' keeps it).
      { ...options, clientId: '', clientSecret: undefined },
      ctx,
      notices,
    );
    return { token, profileName, baseUrl: endpoints.baseUrl, replaced };
  };
  return { profileName, baseUrl: endpoints.baseUrl, store };
}
