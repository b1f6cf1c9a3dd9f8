import { describe, expect, it } from 'vitest';
import { isAmbiguousPath } from '../../../src/loopback/api-proxy.js';

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
  ])('%s is ambiguous: a server may resolve it to another path', (path) => expect(isAmbiguousPath(path)).toBe(true));
  it.each(['/', '/api/me', '/api/.hidden', '/a..b', '/api/v1.2/x', '/api/me.json', '/api/%2e%2ex', '/api/%2Fx'])(
    '%s is a plain path',
    (path) => expect(isAmbiguousPath(path)).toBe(false),
  );
});
