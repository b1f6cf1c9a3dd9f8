import { describe, expect, it } from 'vitest';
import { allowedPathsProblem, isAllowedPath, isAmbiguousPath } from '../../../src/loopback/proxy-path.js';
import { withoutSecret } from '../../../src/loopback/path-secret.js';

describe('isAmbiguousPath', () => {
  it.each([
    '/api/../x',
    '/api/me/..',
    '/.',
    '/./api',
    '/api/%2E%2e/x',
    '/api/%2e./x',
    '/a\\b',
    '/%5Cb',
    '/%5cb',
    '/api/maps%2F..%2Fadmin',
    '/api/maps%2f%2e%2e/x',
    '/api/..;/x',
    '/api/.;jsessionid=1/x',
    '/api/%252e%252e/x',
    '/api/maps%252f..%252fx',
    '/api/%c0%ae%c0%ae/x',
    '/api/%e0%80%ae/x',
    '/api/%ef%bc%8e%ef%bc%8e/x',
    '/api/%e2%80%a4%e2%80%a4/x',
    '/api/．．/x',
    '/api/%ef%bc%bcx',
    '/api/..%20/x',
    '/api/..%09/x',
    '/api/..%0a/x',
    '/api/..%0D/x',
    '/api/%20../x',
    '/api/.%2e%7f/x',
  ])('%s is ambiguous: a server may resolve it to another path', (path) => expect(isAmbiguousPath(path)).toBe(true));
  it.each(['/', '/api/me', '/api/.hidden', '/a..b', '/api/v1.2/x', '/api/me.json', '/api/%2e%2ex', '/api/%2Fx'])(
    '%s is a plain path',
    (path) => expect(isAmbiguousPath(path)).toBe(false),
  );
});

describe('isAllowedPath', () => {
  it.each([
    ['/api/maps', '/api/maps', true],
    ['/api/maps', '/api/maps/1', true],
    ['/api/maps', '/api/maps/', true],
    ['/api/maps', '/api/maps-admin', false],
    ['/api/maps', '/api/mapsecret', false],
    ['/api/maps', '/api', false],
    ['/api/', '/api/maps', true],
    ['/api/', '/api', false],
    ['/', '/anything', true],
  ])('%s admits %s: %s', (prefix, path, isAllowed) => expect(isAllowedPath(path, [prefix])).toBe(isAllowed));
  it('admits every path without a list', () => expect(isAllowedPath('/x', undefined)).toBe(true));
});

describe('allowedPathsProblem', () => {
  it.each([[['']], [['api/maps']], [['/api', '']], [['/api/../oauth2']]])('%j is refused', (prefixes) =>
    expect(allowedPathsProblem(prefixes)).toBeDefined(),
  );
  it('accepts paths', () => expect(allowedPathsProblem(['/api/maps', '/api/me/'])).toBeUndefined());
});

describe('withoutSecret', () => {
  const secret = 's3cr3t-segment-of-the-run';
  it.each([
    [`/${secret}/api/me`, '/api/me'],
    [`/${secret}`, '/'],
    [`/${secret}/`, '/'],
    [`/${secret}?q=1`, '/?q=1'],
    ['/api/me', undefined],
    [`/${secret}x/api/me`, undefined],
    [`/${secret.slice(1)}/api/me`, undefined],
    [`//${secret}/api/me`, undefined],
  ])('%s → %s', (target, expected) => expect(withoutSecret(target, secret)).toBe(expected));
  it('without a secret, the target as it is', () => expect(withoutSecret('/api/me', undefined)).toBe('/api/me'));
});
