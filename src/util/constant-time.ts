import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether two secrets are equal, compared in constant time over their SHA-256 digests, so neither
 * where they differ nor their lengths leak (RFC 6749 §10.12 state, RFC 7636 §4.6 verifier, secrets).
 */
export function isSameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
