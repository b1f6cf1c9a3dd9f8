import type { AppContext } from '../context.js';
import type { Profile, StoredToken } from '../store/profile.js';
import { retireChain } from './chain.js';
import { endGrant, type EndedGrant, type GrantTarget, type StoredGrant } from './end-grant.js';

/**
 * Ends a stored grant as it is when the end finishes, not as it was when it began:
 * under the store's lock from reading the grant to forgetting it, so that no renewal by any process
 * (they ask the server under the same lock and re-read the profile) can mint a pair the end did not
 * see; renewals waiting meanwhile find nothing to renew. Under the lock: the links the profile owes
 * are presented (retireChain), the token it holds is ended (endGrant: RFC 7009, confirmed; an
 * expired one renewed first, detached), and `forget` applied. A personal token is only forgotten.
 * Resolves with the end, or undefined when the profile held no token by then. Throws what endGrant
 * throws, the store keeping the grant (and a pair renewed on the way, stored in its place).
 */
export async function endCurrentGrant(
  target: GrantTarget,
  ctx: AppContext,
  onNote: (line: string) => void,
  stored: Pick<StoredGrant, 'profileName' | 'store'>,
  forget: (current: Profile) => Profile,
): Promise<EndedGrant | undefined> {
  let ended: EndedGrant | undefined;
  let failure: unknown;
  await stored.store.update(
    stored.profileName,
    async (profile) => {
      const token = profile.token;
      if (token === undefined || token.grant === 'personal') return forget(profile);
      const owed = profile.chainToRetire ?? [];
      if (owed.length > 0) {
        // A link that could not be presented may still be live: no "ended" without it (kept recorded).
        const retired = await retireChain(target.server, owed);
        if (retired.failure !== undefined) throw retired.failure;
      }
      let renewed: StoredToken | undefined;
      try {
        ended = await endGrant(token, { ...target, onRenewed: (next) => (renewed = next) }, ctx, onNote);
      } catch (error) {
        if (renewed === undefined) throw error;
        // The pair renewed on the way is what the server holds now: stored, so that nothing is lost.
        failure = error;
        return { ...profile, token: renewed, chainToRetire: undefined };
      }
      return forget(profile);
    },
    { mustExist: true },
  );
  if (failure !== undefined) throw failure;
  return ended;
}
