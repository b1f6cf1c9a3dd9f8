import { describe, expect, it } from 'vitest';
import { redirectUriMatches } from '../../../src/emulator/redirect-uri.js';

describe('redirectUriMatches', () => {
  it.each([
    ['http://127.0.0.1/callback', 'http://127.0.0.1:54321/callback', true],
    ['http://127.0.0.1/callback', 'http://127.0.0.1/callback', true],
    ['http://[::1]/callback', 'http://[::1]:8080/callback', true],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:54321/callback/', false],
    ['http://127.0.0.1/callback', 'http://127.0.0.1:54321/other', false],
    ['http://127.0.0.1/callback', 'http://localhost:54321/callback', false],
    ['http://localhost:3000/callback', 'http://localhost:3001/callback', false],
    ['http://localhost:3000/callback', 'http://localhost:3000/callback', true],
    ['http://127.0.0.1/callback', 'https://127.0.0.1/callback', false],
    ['http://127.0.0.1/callback?a=1', 'http://127.0.0.1:9/callback?a=1', true],
    // Doorkeeper 5.5's URIChecker.matches? drops a query the registered URI does not have.
    ['http://127.0.0.1/callback', 'http://127.0.0.1:9/callback?a=1', true],
    ['http://127.0.0.1/callback?a=1&b=2', 'http://127.0.0.1:9/callback?b=2&a=1', true],
    ['http://127.0.0.1/callback?a=1&b=2', 'http://127.0.0.1:9/callback?a=1', false],
  ])('the emulator matches registered %s against %s: %s (RFC 8252 §7.3)', (registered, given, expected) => {
    expect(redirectUriMatches(registered, given)).toBe(expected);
  });
});
