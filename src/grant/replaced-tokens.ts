import { isMmauthError, type MmauthError } from '../errors.js';
import { requestRevocation } from '../oauth/revocation.js';
import type { ClientAuthentication, ServerConfiguration } from '../oauth/server-configuration.js';
import { liveReplacedTokens, type Profile, type ReplacedToken, type StoredToken } from '../store/profile.js';
import { bindingOf, isSameBinding } from '../store/secrets.js';

/**
 * Whether storing `next` over `former`'s token leaves that token live and unended: it has no refresh
 * token (so no grant to end: a client-credentials or implicit token, or one a renewal minted), is no
 * personal token (only the service's settings end those), expires (endReplacedGrant ends a token
 * that never does) and is another token than `next`.
 */
function isLeftLive(former: StoredToken | undefined, next: StoredToken): former is StoredToken {
  return (
    former !== undefined &&
    former.accessToken !== next.accessToken &&
    former.refreshToken === undefined &&
    former.grant !== 'personal' &&
    former.expiresAt !== undefined
  );
}

/**
 * The replaced tokens a profile keeps when `next` (bound to `baseUrl` and `clientId`) is stored over
 * `former`: `former`'s own, plus its token when isLeftLive, while they live at `nowMs`
 * (epoch ms). Undefined when the binding changes (a `--replace` to another server or client): those
 * are then ended at the old origin by endReplacedGrant, never carried to another.
 */
export function keptReplacedTokens(
  former: Profile | undefined,
  next: { baseUrl: string; clientId: string | undefined; token: StoredToken },
  nowMs: number,
): ReplacedToken[] | undefined {
  if (former === undefined) return undefined;
  const isRebound = !isSameBinding(
    bindingOf('', former.baseUrl, former.clientId),
    bindingOf('', next.baseUrl, next.clientId),
  );
  if (former.baseUrl !== undefined && isRebound) return undefined;
  const added = isLeftLive(former.token, next.token)
    ? [{ accessToken: former.token.accessToken, expiresAt: former.token.expiresAt }]
    : [];
  return liveReplacedTokens([...(former.replacedTokens ?? []), ...added], nowMs);
}

/** What revokeReplacedTokens did: how many the server revoked (HTTP 200), and the first failure with what is left. */
export interface ReplacedTokensEnd {
  revoked: number;
  left: ReplacedToken[];
  failure: MmauthError | undefined;
}

/**
 * Revokes each replaced token (RFC 7009 §2.1, `token_type_hint=access_token`) with the client that
 * obtained it, so that nothing mmauth obtained for a profile is live after logout.
 * A 200 counts as revoked (the server answers 200 for an already dead token too). Tokens whose
 * request failed are returned in `left`, with the first failure. Throws only a non-MmauthError bug.
 */
export async function revokeReplacedTokens(
  server: ServerConfiguration,
  client: ClientAuthentication,
  tokens: readonly ReplacedToken[] | undefined,
): Promise<ReplacedTokensEnd> {
  const left: ReplacedToken[] = [];
  let failure: MmauthError | undefined;
  let revoked = 0;
  for (const token of tokens ?? []) {
    try {
      await requestRevocation(server, client, token.accessToken, 'access_token');
      revoked += 1;
    } catch (error) {
      if (!isMmauthError(error)) throw error;
      left.push(token);
      failure ??= error;
    }
  }
  return { revoked, left, failure };
}
