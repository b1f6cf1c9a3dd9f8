import { describe, expect, it } from 'vitest';
import {
  redactBody,
  redactForm,
  redactHeader,
  redactJson,
  redactUrl,
  REDACTED,
  SecretScrubber,
} from '../../src/http/redact.js';
import { resolveEndpoints } from '../../src/oauth/endpoints.js';
import { implicitParameters, parseImplicitAuthorizationResponse } from '../../src/oauth/implicit.js';
import { failureOf, thrownBy } from '../support/failure.js';

describe('redaction for the --verbose trace', () => {
  it.each([
    [
      'grant_type=authorization_code&code=abc123xyz&code_verifier=v3r1f13r0000&client_id=app',
      'grant_type=authorization_code&code=[redacted]&code_verifier=[redacted]&client_id=app',
    ],
    ['token=t0k3n-secret&token_type_hint=access_token', 'token=[redacted]&token_type_hint=access_token'],
    [
      'grant_type=client_credentials&client_secret=s%20cret+value',
      'grant_type=client_credentials&client_secret=[redacted]',
    ],
    ['scope=service', 'scope=service'],
  ])('form %s', (input, expected) => {
    expect(redactForm(input, new SecretScrubber())).toBe(expected);
  });

  it('JSON fields at any depth, other fields kept', () => {
    const scrubber = new SecretScrubber();
    expect(
      JSON.parse(
        redactJson(
          '{"access_token":"aaaaaaaaaa","token_type":"Bearer","nested":{"refresh_token":"bbbbbbbbbb"},"expires_in":7200}',
          scrubber,
        ),
      ),
    ).toEqual({
      access_token: REDACTED,
      token_type: 'Bearer',
      nested: { refresh_token: REDACTED },
      expires_in: 7200,
    });
    // A value once seen is scrubbed wherever else it turns up (a server echoing it in an HTML page).
    expect(scrubber.scrub('<p>your token aaaaaaaaaa is fine</p>')).toBe(`<p>your token ${REDACTED} is fine</p>`);
    expect(redactJson('not json', scrubber)).toBe('not json');
  });

  it('Authorization headers keep only the scheme; Basic teaches the scrubber the secret', () => {
    const scrubber = new SecretScrubber();
    const basic = Buffer.from('mmauth-demo:s3cret%2Fvalue').toString('base64');
    expect(redactHeader('Authorization', `Basic ${basic}`, scrubber)).toBe(`Basic ${REDACTED}`);
    expect(redactHeader('authorization', 'Bearer abcdefghij', scrubber)).toBe(`Bearer ${REDACTED}`);
    expect(redactHeader('content-type', 'application/json', scrubber)).toBe('application/json');
    expect(scrubber.scrub('s3cret/value and abcdefghij')).toBe(`${REDACTED} and ${REDACTED}`);
  });

  it('URLs: query and fragment fields', () => {
    const scrubber = new SecretScrubber();
    expect(redactUrl('http://127.0.0.1:1/callback?code=abcdefgh&state=xyz', scrubber)).toBe(
      'http://127.0.0.1:1/callback?code=[redacted]&state=xyz',
    );
    expect(redactUrl('http://127.0.0.1:1/callback#access_token=abcdefgh&token_type=Bearer', scrubber)).toBe(
      'http://127.0.0.1:1/callback#access_token=[redacted]&token_type=Bearer',
    );
    expect(redactBody('code=abcdefgh', 'text/plain', scrubber)).toBe('code=[redacted]'); // text/plain: scrubbed by value, learned from the URL above
  });
});

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
      /"iss" is http:\/\/evil.example/,
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
