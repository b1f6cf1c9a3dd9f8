import type { StoredToken } from '../store/profile.js';
import { judgeStoredToken } from '../store/token-state.js';

/** The renewal margin's ceiling, in seconds: a token with less left than this (or half its lifetime) is stale. */
const MARGIN_S = 60;

/** The lifetime the server issued a token with, in seconds; undefined for no expiry. */
export function issuedLifetimeS(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  return Math.max(0, Math.round((Date.parse(token.expiresAt) - Date.parse(token.obtainedAt)) / 1000));
}

/**
 * The renewal margin of a token with an expiry, in seconds: max(`minTtlS`, min(60 s,
 * half its issued lifetime)). A token with less than this left is stale.
 */
export function renewalMarginS(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>, minTtlS: number): number {
  return Math.max(minTtlS, Math.min(MARGIN_S, (issuedLifetimeS(token) ?? 0) / 2));
}

/**
 * When a token goes stale, in epoch ms: its expiry less renewalMarginS (a shared token: less only
 * `minTtlS`); undefined for no expiry.
 * isFresh and exec's renewal timer both use it, so they never disagree (a timer that fires while
 * the token still counts as fresh would re-arm at once).
 */
export function staleAtMs(
  token: Pick<StoredToken, 'obtainedAt' | 'expiresAt' | 'isShared'>,
  minTtlS: number,
): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  // A token the server hands back on renewal: no renewal before its own expiry, which
  // would only return it again with less life left.
  if (token.isShared === true) return Date.parse(token.expiresAt) - minTtlS * 1000;
  return Date.parse(token.expiresAt) - renewalMarginS(token, minTtlS) * 1000;
}

/**
 * Whether a token is fresh at `nowMs` (epoch ms): at least max(`minTtlS`, min(60 s, half its
 * issued lifetime)) left (staleAtMs, to the millisecond), so that a server issuing short tokens
 * does not make every call renew. A token with no expiry always is.
 */
export function isFresh(
  token: Pick<StoredToken, 'obtainedAt' | 'expiresAt' | 'isShared'>,
  nowMs: number,
  minTtlS: number,
): boolean {
  const at = staleAtMs(token, minTtlS);
  if (at === undefined) return true;
  if (judgeStoredToken(token, nowMs) === 'expired') return false;
  return nowMs <= at;
}
