import type { StoredToken } from '../store/profile.js';
import { judgeStoredToken, secondsLeft } from '../store/token-state.js';

/** The renewal margin's ceiling, in seconds: a token with less left than this (or half its lifetime) is stale. */
const MARGIN_S = 60;

/** The lifetime the server issued a token with, in seconds; undefined for no expiry. */
export function issuedLifetimeS(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  return Math.max(0, Math.round((Date.parse(token.expiresAt) - Date.parse(token.obtainedAt)) / 1000));
}

/**
 * The renewal margin of a token with an expiry, in seconds (decisions 7): max(`minTtlS`, min(60 s,
 * half its issued lifetime)). A token with less than this left is stale.
 */
export function renewalMarginS(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>, minTtlS: number): number {
  return Math.max(minTtlS, Math.min(MARGIN_S, (issuedLifetimeS(token) ?? 0) / 2));
}

/**
 * Whether a token is fresh at `nowMs` (epoch ms): at least max(`minTtlS`, min(60 s, half its
 * issued lifetime)) left, so that a server issuing short tokens does not make every call renew
 * (decisions 7). A token with no expiry always is.
 */
export function isFresh(token: Pick<StoredToken, 'obtainedAt' | 'expiresAt'>, nowMs: number, minTtlS: number): boolean {
  const leftS = secondsLeft(token, nowMs);
  const lifetimeS = issuedLifetimeS(token);
  if (leftS === undefined || lifetimeS === undefined) return true;
  if (judgeStoredToken(token, nowMs) === 'expired') return false;
  return leftS >= renewalMarginS(token, minTtlS);
}
