import type { ProfileStore } from '../store/profile-store.js';
import { isMmauthError, type MmauthError } from '../errors.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';

/**
 * Presents each access token in `accessTokens` once at token info (spec §4.3), which on a server of
 * this family retires the refresh token its pair replaced, whether or not the access token has
 * expired or been revoked since (as servers of the family do). Any HTTP answer
 * counts as done (401 for a dead token retires all the same; 404, a server without token info,
 * leaves nothing this client could do). Returns the tokens still to present (their request failed
 * on the network: to be tried again at the next renewal, revoke or logout) and the first such
 * failure. Throws nothing but a non-MmauthError bug.
 */
export async function retireChain(
  server: ServerConfiguration,
  accessTokens: readonly string[],
): Promise<{ left: string[]; failure: MmauthError | undefined }> {
  const left: string[] = [];
  let failure: MmauthError | undefined;
  for (const accessToken of accessTokens) {
    try {
      await server.fetch(server.endpoints.tokenInfo.href, {
        method: 'GET',
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      });
    } catch (error) {
      if (!isMmauthError(error)) throw error;
      left.push(accessToken);
      failure ??= error;
    }
  }
  return { left, failure };
}

/** `chain` without the tokens in `done`: what is still to be presented after a retirement. */
export function withoutRetired(chain: readonly string[] | undefined, done: readonly string[]): string[] | undefined {
  const left = (chain ?? []).filter((token) => !done.includes(token));
  return left.length === 0 ? undefined : left;
}

/**
 * Presents `chain` (retireChain) and removes what reached the server from the profile's record,
 * under the lock; the record is left as it is when nothing did. Returns what retireChain returns.
 */
export async function settleChain(
  server: ServerConfiguration,
  chain: readonly string[],
  target: { profileName: string; store: ProfileStore },
): Promise<{ left: string[]; failure: MmauthError | undefined }> {
  const settled = await retireChain(server, chain);
  const { left } = settled;
  const done = chain.filter((token) => !left.includes(token));
  if (done.length > 0) {
    // Only the same profile, and only while it still owes these links: a profile renamed, removed or
    // replaced meanwhile is left as it is (attacks N17; a link still recorded elsewhere is presented again later).
    await target.store.update(
      target.profileName,
      (current) =>
        current.chainToRetire?.some((token) => done.includes(token)) === true
          ? { ...current, chainToRetire: withoutRetired(current.chainToRetire, done) }
          : current,
      { mustExist: true },
    );
  }
  return settled;
}
