import type { AppContext } from '../context.js';
import { hasErrorCode, type MmauthError } from '../errors.js';
import type { ListedProfile } from '../store/profile-listing.js';
import type { ProfileStore } from '../store/store-types.js';
import { judgeStoredToken, type TokenState } from '../store/token-state.js';
import { checkStoredTokens, type TokenCheck } from './token-check.js';

/** What `status` reports of one profile, before it is worded. */
export interface ProfileStatus {
  name: string;
  profile: ListedProfile;
  /** The stored token's state at the context's clock. */
  state: TokenState;
  /** What token info said (with a check), else null. */
  check: TokenCheck;
  /** The `credentials_lost` error reading its sealed credentials threw, if they no longer open. */
  lost: MmauthError | undefined;
}

/**
 * The status of each of `profiles` at `ctx.nowMs()`: its token's state, with `check` what token
 * info says of it (checkStoredTokens: spec §4.3, each request bounded by `timeoutSeconds`), and
 * whether its sealed credentials still open. `unreachable` is the failure of the profile named
 * `selected` when its server gave no answer. Throws what checkStoredTokens throws.
 */
export async function profileStatuses(
  store: ProfileStore,
  profiles: ReadonlyArray<{ name: string; profile: ListedProfile }>,
  options: { check: boolean; timeoutSeconds: number; selected: string },
  ctx: AppContext,
): Promise<{ rows: ProfileStatus[]; unreachable: unknown }> {
  let unreachable: unknown;
  const checks = options.check
    ? await checkStoredTokens(
        store,
        profiles.map(({ name }) => name),
        options.timeoutSeconds,
        ctx,
        (name, error) => {
          if (name === options.selected) unreachable = error;
        },
      )
    : new Map<string, TokenCheck>();
  const lost = await lostCredentials(store, profiles);
  const nowMs = ctx.nowMs();
  const rows = profiles.map(({ name, profile }) => ({
    name,
    profile,
    state: judgeStoredToken(profile.token, nowMs),
    check: checks.get(name) ?? null,
    lost: lost.get(name),
  }));
  return { rows, unreachable };
}

/**
 * The keyring profiles among `profiles` whose sealed credentials no longer open, each with the
 * `credentials_lost` error reading them threw. Any other failure (a keyring that does not answer)
 * is status's to leave unsaid: it never throws.
 */
async function lostCredentials(
  store: ProfileStore,
  profiles: ReadonlyArray<{ name: string; profile: ListedProfile }>,
): Promise<Map<string, MmauthError>> {
  const lost = new Map<string, MmauthError>();
  for (const { name, profile } of profiles) {
    if (profile.credentialsIn !== 'keyring' || (!profile.hasClientSecret && profile.token === undefined)) continue;
    try {
      await store.read(name);
    } catch (error) {
      if (hasErrorCode(error, 'credentials_lost')) lost.set(name, error);
    }
  }
  return lost;
}
