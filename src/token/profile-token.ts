import type { AppContext } from '../context.js';
import { renewalOf } from '../grant/renewal.js';
import { bindingOf } from '../store/secrets.js';
import type { Output } from '../ui/output.js';
import { formatInstant } from '../ui/format.js';
import { usableAccessToken, type UsableTokenOptions } from './usable-token.js';
import { agentSocketOf } from '../settings/settings.js';
import { agentTokenAfterRefusal } from './agent-token.js';
import { followAgent } from './agent-follower.js';
import { followProfile } from './profile-follower.js';
import { keepTokenFresh, type TokenKeeper } from './token-keeper.js';

/** A profile's token kept valid for a long-running consumer (`exec`'s child, `proxy`'s programs). */
export interface KeptToken {
  /** The token at start, and where it came from. */
  first: Awaited<ReturnType<typeof usableAccessToken>>;
  keeper: TokenKeeper;
  /** The profile's base URL (undefined for a token given in MMAUTH_TOKEN). */
  baseUrl: string | undefined;
}

/**
 * Gets a usable token exactly as `token` does (throws what usableAccessToken throws: no token is
 * exit 4), warns once when it cannot be renewed here (saying when it expires), and keeps it fresh:
 * renewed before it goes stale, another process's renewal followed in the store, bound to the
 * profile's origin and client id (keepTokenFresh, followProfile). `onToken` gets each new token.
 */
export async function keepProfileToken(
  options: UsableTokenOptions,
  ctx: AppContext,
  out: Output,
  onToken: (accessToken: string) => void,
): Promise<KeptToken> {
  const first = await usableAccessToken(options, ctx, (line) => out.warn(line));
  // From an agent: it renews (the keeper asks it again before the token goes stale, and after a
  // refusal) and follows it: another client's 401 renews the agent's token for every consumer.
  const agentSocket = agentSocketOf(ctx.env);
  if (agentSocket !== undefined) {
    const keeper = keepTokenFresh(first, options, ctx, onToken, (line) => out.warn(line), {
      follower: followAgent(
        agentSocket,
        first.profileName,
        { accessToken: first.accessToken, baseUrl: first.baseUrl },
        ctx,
      ),
      canRenew: true,
      profileName: first.profileName,
      renewAfterRefusal: (accessToken) =>
        agentTokenAfterRefusal(agentSocket, first.profileName, accessToken, options.timeout, ctx),
    });
    return { first, keeper, baseUrl: first.baseUrl };
  }
  const store = await ctx.openStore();
  const listed = first.stored === undefined ? undefined : store.listOne(first.profileName);
  const canRenew = listed !== undefined && renewalOf(listed, ctx.env) !== 'none';
  if (!canRenew && first.stored?.expiresAt !== undefined) {
    out.warn(
      `this token cannot be renewed here (${first.stored.grant}): it is kept until it expires at ${formatInstant(Date.parse(first.stored.expiresAt))}`,
    );
  }
  // The profile's renewals by any process reach the consumer; bound to today's origin and client (N11).
  const follower =
    listed === undefined
      ? undefined
      : followProfile(store, first.profileName, bindingOf(first.profileName, listed.baseUrl, listed.clientId));
  const keeper = keepTokenFresh(first, options, ctx, onToken, (line) => out.warn(line), {
    follower,
    canRenew,
    profileName: first.profileName,
  });
  return { first, keeper, baseUrl: listed?.baseUrl ?? ctx.env.MMAUTH_BASE_URL?.trim() };
}
