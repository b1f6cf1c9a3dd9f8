import { describe, expect, it } from 'vitest';
import { parseLoopbackRedirectUri } from '../../../src/settings/redirect-uri.js';
import { failureOf, thrownBy } from '../../support/failure.js';

describe('parseLoopbackRedirectUri (--redirect-uri)', () => {
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
    'http://127.0.0.1:0/cb',
    'http://localhost:0/cb',
  ])('login refuses --redirect-uri %s', (value) => {
    expect(failureOf(thrownBy(() => parseLoopbackRedirectUri(value)))).toMatchObject({
      code: 'invalid_redirect_uri',
      exitCode: 2,
    });
  });
});
