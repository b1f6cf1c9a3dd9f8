import type { AppContext } from '../context.js';
import type { GrantTarget, StoredGrant } from '../grant/end-grant.js';
import type { ClientOptions } from './setting-options.js';
import { findClientSecret, requireClientId, traceFor } from './settings.js';
import type { Target } from './target.js';

/**
 * What endGrant needs to end the stored grant of `target`'s profile: the server, the client (its
 * id by flag > MMAUTH_CLIENT_ID > profile, its secret from findClientSecret, none for a public
 * client), the bound on each request, the trace, and where the profile lives.
 * Throws what requireClientId and findClientSecret throw.
 */
export async function resolveGrantTarget(
  options: ClientOptions,
  ctx: AppContext,
  target: Target,
): Promise<{ grant: GrantTarget; stored: StoredGrant }> {
  const clientId = await requireClientId(options.clientId, ctx, target.profile);
  const clientSecret = await findClientSecret(options, ctx, { ...target, clientId });
  return {
    grant: {
      server: target.server,
      client: { clientId, clientSecret },
      timeoutSeconds: options.timeout,
      trace: await traceFor(options, ctx),
    },
    stored: { profileName: target.profileName, store: target.store, chainToRetire: target.profile?.chainToRetire },
  };
}
