import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../support/failure.js';
import { parseTokenInfo, parseTokenResponse } from '../../../src/oauth/parse.js';

const TOKEN = 'a'.repeat(43);

describe('parseTokenResponse (spec §2.2, RFC 6749 §5.1)', () => {
  it.each([
    [
      'Doorkeeper 5',
      { access_token: TOKEN, token_type: 'Bearer', expires_in: 7200, scope: 'service userinfo.email', created_at: 1 },
      { tokenType: 'bearer', expiresInSeconds: 7200, scope: 'service userinfo.email' },
    ],
    [
      'the spec sample (lower-case bearer)',
      { access_token: TOKEN, token_type: 'bearer', scope: 'service' },
      { tokenType: 'bearer', expiresInSeconds: undefined, scope: 'service' },
    ],
    [
      'no expiry, no scope',
      { access_token: TOKEN, token_type: 'BEARER' },
      { expiresInSeconds: undefined, scope: undefined },
    ],
    [
      'expires_in null',
      { access_token: TOKEN, token_type: 'bearer', expires_in: null },
      { expiresInSeconds: undefined },
    ],
    [
      'scope with extra spaces',
      { access_token: TOKEN, token_type: 'bearer', scope: ' service   userinfo.email ' },
      { scope: 'service userinfo.email' },
    ],
  ])('accepts %s', (_name, json, expected) => {
    expect(parseTokenResponse(json)).toMatchObject({ accessToken: TOKEN, ...expected });
  });

  it.each([
    ['a string', '"token"', /not a JSON object/],
    ['an array', [], /not a JSON object/],
    ['null', null, /not a JSON object/],
    ['no access_token', { token_type: 'bearer' }, /"access_token" is missing/],
    ['an empty access_token', { access_token: '', token_type: 'bearer' }, /"access_token" is missing/],
    ['a numeric access_token', { access_token: 42, token_type: 'bearer' }, /"access_token"/],
    ['a control character in the token', { access_token: 'abc\ndef', token_type: 'bearer' }, /"access_token"/],
    ['no token_type', { access_token: TOKEN }, /"token_type" is missing/],
    ['a mac token_type', { access_token: TOKEN, token_type: 'mac' }, /"token_type" is "mac"/],
    [
      'expires_in as a string',
      { access_token: TOKEN, token_type: 'bearer', expires_in: '7200' },
      /"expires_in" must be a whole number/,
    ],
    ['a negative expires_in', { access_token: TOKEN, token_type: 'bearer', expires_in: -1 }, /"expires_in"/],
    ['a fractional expires_in', { access_token: TOKEN, token_type: 'bearer', expires_in: 1.5 }, /"expires_in"/],
    ['a huge expires_in', { access_token: TOKEN, token_type: 'bearer', expires_in: 1e12 }, /"expires_in"/],
    [
      'scope as an array',
      { access_token: TOKEN, token_type: 'bearer', scope: ['service'] },
      /"scope" must be a space-separated string/,
    ],
  ])('refuses %s with malformed_response naming the field', (_name, json, message) => {
    const parse = () => parseTokenResponse(typeof json === 'string' ? JSON.parse(json) : json);
    expect(thrownBy(parse).code).toBe('malformed_response');
    expect(parse).toThrow(message);
  });
});

describe('parseTokenInfo (spec §2.4 and Doorkeeper 5)', () => {
  it.each([
    [
      "the spec's record",
      {
        resource_owner_id: 42,
        scope: ['service', 'userinfo.email'],
        expires_in_seconds: 7000,
        application: { uid: 1 },
      },
      {
        resourceOwnerId: 42,
        scopes: ['service', 'userinfo.email'],
        expiresInSeconds: 7000,
        applicationUid: 1,
        createdAt: undefined,
      },
    ],
    [
      "Doorkeeper 5's record",
      {
        resource_owner_id: 42,
        scope: ['service'],
        expires_in: 7200,
        application: { uid: 'abc' },
        created_at: 1795244014,
      },
      {
        resourceOwnerId: 42,
        scopes: ['service'],
        expiresInSeconds: 7200,
        applicationUid: 'abc',
        createdAt: 1795244014,
      },
    ],
    [
      'a client credentials token on Doorkeeper 5 (null owner, null expiry)',
      { resource_owner_id: null, scope: ['service'], expires_in: null, application: { uid: 'abc' } },
      { resourceOwnerId: null, expiresInSeconds: null },
    ],
    [
      'a scope string',
      { resource_owner_id: 1, scope: 'service userinfo.email', expires_in_seconds: 5 },
      { scopes: ['service', 'userinfo.email'], applicationUid: null },
    ],
  ])('reads %s', (_name, json, expected) => {
    expect(parseTokenInfo(json)).toMatchObject(expected);
  });

  it.each([
    ['not an object', 'x', /not a JSON object/],
    ['a fractional owner', { resource_owner_id: 1.5, scope: [] }, /"resource_owner_id"/],
    ['scope of numbers', { resource_owner_id: 1, scope: [1, 2] }, /"scope" must be an array of strings/],
    [
      'a string expires_in_seconds',
      { resource_owner_id: 1, scope: [], expires_in_seconds: '10' },
      /"expires_in_seconds"/,
    ],
    ['a negative expires_in', { resource_owner_id: 1, scope: [], expires_in: -5 }, /"expires_in"/],
    [
      'application as a string',
      { resource_owner_id: 1, scope: [], application: 'x' },
      /"application" must be an object/,
    ],
    [
      'application.uid as an object',
      { resource_owner_id: 1, scope: [], application: { uid: {} } },
      /"application.uid"/,
    ],
    ['created_at as a string', { resource_owner_id: 1, scope: [], created_at: 'yesterday' }, /"created_at"/],
  ])('refuses %s', (_name, json, message) => {
    expect(() => parseTokenInfo(json)).toThrow(message);
  });
});
