import { describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../../../src/oauth/endpoints.js';
import { implicitParameters, parseImplicitAuthorizationResponse } from '../../../src/oauth/implicit.js';
import { failureOf, thrownBy } from '../../support/failure.js';

describe('parseImplicitAuthorizationResponse (RFC 6749 §4.2.2; server-behaviour.md authorize 6)', () => {
  const endpoints = resolveEndpoints('http://127.0.0.1:4010');
  const parse = (fragment: string) =>
    parseImplicitAuthorizationResponse(
      endpoints,
      implicitParameters(new URL(`http://127.0.0.1:9/callback#${fragment}`)),
      'the-state',
    );

  it('reads the fragment Doorkeeper sends: Bearer, expires_in, no scope', () => {
    expect(parse('access_token=tok-0123456789&token_type=Bearer&expires_in=7200&state=the-state')).toEqual({
      accessToken: 'tok-0123456789',
      tokenType: 'bearer',
      expiresInSeconds: 7200,
      scope: undefined,
    });
    expect(parse('access_token=tok-0123456789&token_type=bearer&state=the-state')).toMatchObject({
      expiresInSeconds: undefined,
    });
    expect(parse('access_token=tok&token_type=Bearer&scope=service+userinfo.email&state=the-state')).toMatchObject({
      scope: 'service userinfo.email',
    });
  });

  it.each([
    ['access_token=tok&token_type=Bearer', 'state_mismatch', /missing "state"/],
    ['access_token=tok&token_type=Bearer&state=other', 'state_mismatch', /unexpected "state"/],
    [
      'access_token=tok&token_type=Bearer&state=the-state&iss=http%3A%2F%2Fevil.example',
      'state_mismatch',
      /"iss" names another server, expected http:\/\/127.0.0.1:4010$/,
    ],
    [
      'error=access_denied&error_description=The+resource+owner+denied&state=the-state',
      'authorization_error',
      /access_denied/,
    ],
    ['token_type=Bearer&state=the-state', 'malformed_response', /"access_token" is missing/],
    ['access_token=tok&state=the-state', 'malformed_response', /"token_type" is missing/],
    ['access_token=tok&token_type=mac&state=the-state', 'malformed_response', /only handles bearer/],
    [
      'access_token=tok&token_type=Bearer&expires_in=1.5&state=the-state',
      'malformed_response',
      /"expires_in" must be a whole number/,
    ],
    [
      'access_token=tok&token_type=Bearer&expires_in=-1&state=the-state',
      'malformed_response',
      /"expires_in" must be a whole number/,
    ],
    ['code=abc&state=the-state', 'malformed_response', /authorization code instead of a token/],
  ])('%s → %s', (fragment, code, message) => {
    const failure = failureOf(thrownBy(() => parse(fragment)));
    expect(failure.code).toBe(code);
    expect(failure.exitCode).toBe(code === 'malformed_response' ? 1 : 4);
    expect(failure.message).toMatch(message);
  });

  it('falls back to the query when the fragment is empty (errors some servers put there)', () => {
    expect(implicitParameters(new URL('http://127.0.0.1:9/callback?error=access_denied&state=s')).get('error')).toBe(
      'access_denied',
    );
    expect(implicitParameters(new URL('http://127.0.0.1:9/callback?x=1#access_token=t')).get('access_token')).toBe('t');
  });
});
