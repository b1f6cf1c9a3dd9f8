import { describe, expect, it } from 'vitest';
import { isRecentlyVerified } from '../../../src/token/helper-contract.js';

describe('isRecentlyVerified', () => {
  const token = (verifiedAt: string | undefined) => ({
    accessToken: 't',
    tokenType: 'bearer',
    scope: undefined,
    grant: 'authorization_code' as const,
    obtainedAt: '2026-01-01T00:00:00Z',
    expiresAt: undefined,
    verifiedAt,
  });
  const at = Date.parse('2026-01-01T00:00:10Z');
  it.each([
    ['checked 1 s ago (a run started together)', '2026-01-01T00:00:09Z', true],
    ['checked 5 s ago (a re-run after a 401)', '2026-01-01T00:00:05Z', false],
    ['never checked', undefined, false],
    ['checked in the future (a clock set back)', '2026-01-01T00:00:30Z', false],
  ])('%s: %s', (_what, verifiedAt, isRecent) => expect(isRecentlyVerified(token(verifiedAt), at)).toBe(isRecent));
});
