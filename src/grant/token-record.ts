import type { TokenResponse } from '../oauth/parse.js';
import type { TokenOrigin } from '../oauth/wire.js';
import type { StoredToken } from '../store/profile.js';

/**
 * A token endpoint response (RFC 6749 §5.1; spec §2.2) as the record to store, with its absolute
 * expiry from `nowMs` (epoch ms); an omitted `scope` means the requested scope was granted (§5.1).
 */
export function toStoredToken(
  response: TokenResponse,
  origin: TokenOrigin,
  nowMs: number,
  requestedScope: string,
): StoredToken {
  return {
    accessToken: response.accessToken,
    tokenType: response.tokenType,
    scope: response.scope ?? requestedScope,
    grant: origin,
    obtainedAt: new Date(nowMs).toISOString(),
    ...(response.refreshToken === undefined ? {} : { refreshToken: response.refreshToken }),
    expiresAt:
      response.expiresInSeconds === undefined
        ? undefined
        : new Date(nowMs + response.expiresInSeconds * 1000).toISOString(),
  };
}
