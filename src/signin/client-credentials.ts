import type { AppContext } from '../context.js';
import { assertMayStore, credentialsFor } from '../grant/credential-binding.js';
import { toStoredToken } from '../grant/token-record.js';
import { requestClientCredentialsToken } from '../oauth/client-credentials.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import type { ClientOptions } from '../settings/setting-options.js';
import { chooseScope, requireClientId, resolveClientSecret } from '../settings/settings.js';
import { resolveTarget } from '../settings/target.js';
import { prepareStoring, type StorageOptions } from './credential-storage.js';
import { storeGrantReturning } from './replaced-grant.js';
import type { SignedIn } from './sign-in.js';
import type { PlanNotices } from './sign-in-plan.js';

/** What a client credentials grant is asked for. */
export interface ClientGrantOptions extends ClientOptions, StorageOptions {
  scope?: string;
  /** false: hand the token back only, store nothing. */
  save: boolean;
  /** Replace the profile's token although it is a user token or belongs to another server. */
  replace?: boolean;
}

/**
 * The client credentials grant (RFC 6749 §4.4; spec §4.2 behaviour 2): asks the token endpoint
 * with the client's id, secret and scope; with `save`, stores base URL, client id, secret, scope
 * and token in the selected profile (storeGrant; a user's token or another server's replaced
 * only with `replace`) and ends the grant it replaced. Nothing is stored on failure. Returns the
 * token and `replaced` (null when nothing was). Throws settings, network, malformed-answer and
 * `token_endpoint_error` errors.
 */
export async function obtainClientGrant(
  options: ClientGrantOptions,
  ctx: AppContext,
  notices: PlanNotices & { info(line: string): void },
): Promise<SignedIn> {
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profile, profileName } = target;
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const scope = await chooseScope(options.scope, profile, DEFAULT_SCOPE, ctx);
  if (options.save)
    assertMayStore(profileName, profile, endpoints.baseUrl, 'client_credentials', options.replace === true);
  const intent = options.save ? await prepareStoring(options, target.store, profileName, notices) : {};
  const usable = options.replace === true ? credentialsFor(profile, endpoints.baseUrl) : profile;
  const clientSecret = await resolveClientSecret(options, ctx, { ...target, profile: usable, clientId });
  // Asked for under the store's lock when saving: the wait for the lock comes before anything is sent.
  const obtain = async () =>
    toStoredToken(
      await requestClientCredentialsToken(target.server, clientId, clientSecret, scope),
      'client_credentials',
      ctx.nowMs(),
      scope,
    );
  if (!options.save) return { token: await obtain(), profileName, baseUrl: endpoints.baseUrl, replaced: null };
  const { replaced, stored } = await storeGrantReturning(
    { store: target.store, profileName, intent, baseUrl: endpoints.baseUrl },
    obtain,
    () => ({ baseUrl: endpoints.baseUrl, clientId, clientSecret, scope }),
    { ...options, clientId, clientSecret },
    ctx,
    notices,
  );
  return { token: stored, profileName, baseUrl: endpoints.baseUrl, replaced };
}
