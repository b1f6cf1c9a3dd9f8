import { describe, expect, it } from 'vitest';
import { assertProfileName } from '../../../src/store/profile.js';
import { failureOf, thrownBy } from '../../support/failure.js';

describe('assertProfileName', () => {
  it.each(['default', 'work.eu-1', 'A_b-9', 'x'.repeat(64)])('profile name %s is valid', (name) => {
    expect(assertProfileName(name)).toBe(name);
  });

  it.each(['', 'a/b', 'a b', 'x'.repeat(65), '..\u00e9'])('profile name %j is refused', (name) => {
    expect(failureOf(thrownBy(() => assertProfileName(name)))).toMatchObject({
      code: 'invalid_profile_name',
      exitCode: 2,
    });
  });
});
