import { describe, expect, it } from 'vitest';
import { describeLifetime, formatDuration, maskToken } from '../../../src/ui/format.js';

describe('formats', () => {
  it.each([
    [0, '0s'],
    [45, '45s'],
    [60, '1m'],
    [3599, '59m 59s'],
    [3600, '1h'],
    [7199, '1h 59m'],
    [90_061, '1d 1h'],
  ])('formatDuration(%d) = %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('describeLifetime gives human and absolute time, or no expiry', () => {
    expect(describeLifetime(3600, Date.UTC(2026, 10, 21, 8, 0, 0))).toBe('1h (until 2026-11-21T09:00:00Z)');
    expect(describeLifetime(null, 0)).toBe('no expiry');
  });

  it.each([
    ['abcdefghijklmnopqrstuvwxyz', 'abcd…wxyz'],
    ['short-token', '********'],
  ])('maskToken(%s) = %s', (token, masked) => {
    expect(maskToken(token)).toBe(masked);
  });
});
