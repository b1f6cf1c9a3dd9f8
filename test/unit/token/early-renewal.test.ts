import { describe, expect, it } from 'vitest';
import { earlyRenewalRefusal } from '../../../src/token/agent-tokens.js';
import type { StoredToken } from '../../../src/store/profile.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');

/** A token issued `ageS` seconds before NOW for `lifetimeS` seconds (undefined: no expiry). */
function token(ageS: number, lifetimeS: number | undefined): StoredToken {
  const obtained = NOW - ageS * 1000;
  return {
    accessToken: 'a',
    tokenType: 'bearer',
    scope: undefined,
    grant: 'authorization_code',
    obtainedAt: new Date(obtained).toISOString(),
    expiresAt: lifetimeS === undefined ? undefined : new Date(obtained + lifetimeS * 1000).toISOString(),
  };
}

describe('earlyRenewalRefusal: a min_ttl renews early at most once per token', () => {
  it.each([
    { ageS: 0, lifetimeS: 3600, minTtlS: 86_400, refused: /issues tokens for 3600 s, less than min_ttl 86400/ },
    { ageS: 3000, lifetimeS: 3600, minTtlS: 3601, refused: /less than min_ttl 3601/ },
    { ageS: 10, lifetimeS: 3600, minTtlS: 3600, refused: /issued 10 s ago for 3600 s/ },
    { ageS: 1799, lifetimeS: 3600, minTtlS: 3000, refused: /half its lifetime/ },
    { ageS: 1800, lifetimeS: 3600, minTtlS: 3000, refused: undefined },
    { ageS: 3400, lifetimeS: 3600, minTtlS: 300, refused: undefined },
    { ageS: 10, lifetimeS: undefined, minTtlS: 86_400, refused: undefined },
  ])('a token $ageS s old of $lifetimeS s, min_ttl $minTtlS', ({ ageS, lifetimeS, minTtlS, refused }) => {
    const why = earlyRenewalRefusal(token(ageS, lifetimeS), minTtlS, NOW);
    if (refused === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(refused);
  });
});
