import { describe, expect, it } from 'vitest';
import { reasonNotToOpen, splitCommandLine } from '../../src/browser/open-browser.js';
import { parseLoopbackRedirectUri } from '../../src/commands/shared/redirect-uri.js';
import { redirectUriMatches } from '../../src/emulator/redirect-uri.js';
import { failureOf, thrownBy } from '../support/failure.js';
import { isLoopbackHost, resolveEndpoints } from '../../src/oauth/endpoints.js';
import { assertProfileName } from '../../src/store/profile.js';
import { describeLifetime, formatDuration, maskToken } from '../../src/ui/format.js';

describe('resolveEndpoints: https unless loopback (spec §4)', () => {
  it.each([
    ['https://maps.example.com', 'https://maps.example.com/oauth2/token'],
    ['https://maps.example.com/', 'https://maps.example.com/oauth2/token'],
    ['https://example.com/api/', 'https://example.com/api/oauth2/token'],
    ['http://127.0.0.1:4010', 'http://127.0.0.1:4010/oauth2/token'],
    ['http://127.8.9.10', 'http://127.8.9.10/oauth2/token'],
    ['http://localhost:3000', 'http://localhost:3000/oauth2/token'],
    ['http://[::1]:4010', 'http://[::1]:4010/oauth2/token'],
  ])('accepts %s', (baseUrl, token) => {
    const endpoints = resolveEndpoints(baseUrl);
    expect(endpoints.token.href).toBe(token);
    expect(endpoints.tokenInfo.href).toBe(token.replace(/token$/, 'token/info'));
  });

  it.each([
    ['http://maps.example.com', /refusing plain http/],
    ['http://128.0.0.1', /refusing plain http/],
    ['http://localhost.example.com', /refusing plain http/],
    ['ftp://127.0.0.1', /must use https/],
    ['maps.example.com', /not an absolute URL/],
    ['https://user:pw@maps.example.com', /credentials/],
    ['https://maps.example.com/?x=1', /query/],
  ])('refuses %s', (baseUrl, message) => {
    expect(failureOf(thrownBy(() => resolveEndpoints(baseUrl))).exitCode).toBe(2);
    expect(() => resolveEndpoints(baseUrl)).toThrow(message);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['LOCALHOST', true],
    ['[::1]', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['127.0.0.1.nip.io', false],
  ])('isLoopbackHost(%s) is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('redirect URIs', () => {
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
    ['http://127.0.0.1/callback', 'http://127.0.0.1:9/callback?a=1', false],
  ])('the emulator matches registered %s against %s: %s (RFC 8252 §7.3)', (registered, given, expected) => {
    expect(redirectUriMatches(registered, given)).toBe(expected);
  });

  it.each([
    ['http://127.0.0.1:8976/callback', { port: 8976, path: '/callback' }],
    ['http://localhost:8976/cb', { port: 8976, path: '/cb' }],
  ])('login accepts --redirect-uri %s', (value, expected) => {
    expect(parseLoopbackRedirectUri(value)).toMatchObject(expected);
  });

  it.each([
    'http://127.0.0.1/callback',
    'https://127.0.0.1:1/cb',
    'http://[::1]:8976/cb',
    'http://10.0.0.1:8976/cb',
    'http://127.0.0.1:8976/cb?x=1',
    'nonsense',
  ])('login refuses --redirect-uri %s', (value) => {
    expect(failureOf(thrownBy(() => parseLoopbackRedirectUri(value)))).toMatchObject({
      code: 'invalid_redirect_uri',
      exitCode: 2,
    });
  });
});

describe('splitCommandLine (BROWSER)', () => {
  it.each([
    ['firefox', ['firefox']],
    ['  open   -a Safari ', ['open', '-a', 'Safari']],
    ['"/opt/My Browser/bin" --new-window', ['/opt/My Browser/bin', '--new-window']],
    ["node '/path with space/agent.js'", ['node', '/path with space/agent.js']],
    ['a\\ b c', ['a b', 'c']],
    ['echo "say \\"hi\\""', ['echo', 'say "hi"']],
    ['x ""', ['x', '']],
    ['$(rm -rf ~)', ['$(rm', '-rf', '~)']],
  ])('%s', (command, words) => {
    expect(splitCommandLine(command)).toEqual(words);
  });
});

describe('reasonNotToOpen', () => {
  it.each([
    [{ CI: 'true', DISPLAY: ':0' }, 'linux', /CI/],
    [{ SSH_CONNECTION: '1 2 3 4', DISPLAY: ':0' }, 'linux', /SSH/],
    [{}, 'linux', /no display/],
    [{ DISPLAY: ':0' }, 'linux', undefined],
    [{ WAYLAND_DISPLAY: 'wayland-0' }, 'linux', undefined],
    [{}, 'darwin', undefined],
    [{ CI: 'false' }, 'darwin', undefined],
  ] as const)('%j on %s', (env, platform, reason) => {
    const result = reasonNotToOpen(env, platform);
    if (reason === undefined) expect(result).toBeUndefined();
    else expect(result).toMatch(reason);
  });
});

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
