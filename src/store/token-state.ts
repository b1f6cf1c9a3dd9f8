import type { StoredToken } from './profile.js';

/** What a stored token is worth now: usable with time left, usable forever, expired, or absent. */
export type TokenState = 'valid' | 'no_expiry' | 'expired' | 'none';

/** The state of a stored token at `nowMs` (epoch ms); a token without `expiresAt` never expires by time (spec §3). */
export function judgeStoredToken(token: Pick<StoredToken, 'expiresAt'> | undefined, nowMs: number): TokenState {
  if (token === undefined) return 'none';
  if (token.expiresAt === undefined) return 'no_expiry';
  return Date.parse(token.expiresAt) > nowMs ? 'valid' : 'expired';
}

/** Whole seconds from `nowMs` (epoch ms) until a stored token's `expiresAt`, at least 0; undefined for no expiry. */
export function secondsLeft(token: Pick<StoredToken, 'expiresAt'>, nowMs: number): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  return Math.max(0, Math.round((Date.parse(token.expiresAt) - nowMs) / 1000));
}
