import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../../src/http/http-types.js';
import { parseChallengeError } from '../../../src/oauth/describe-error.js';
import { parseTokenEndpointResponse } from '../../../src/oauth/token-response.js';
import { failureOf as describe_, thrownBy } from '../../support/failure.js';

function answer(
  status: number,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' },
): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, statusText: '', headers, body: new TextEncoder().encode(text) };
}

function failureOf(value: HttpResponse): { exitCode: number; message: string } {
  return describe_(thrownBy(() => parseTokenEndpointResponse(value)));
}

describe('parseTokenEndpointResponse (the client credentials path, without Fetch API objects)', () => {
  it('takes a 200 JSON token answer, normalized', () => {
    expect(
      parseTokenEndpointResponse(
        answer(200, { access_token: 'abc', token_type: 'Bearer', expires_in: 60, scope: 'b a' }),
      ),
    ).toEqual({ accessToken: 'abc', tokenType: 'bearer', expiresInSeconds: 60, scope: 'b a' });
    expect(
      parseTokenEndpointResponse(
        answer(200, { access_token: 'abc', token_type: 'bearer' }, { 'content-type': 'application/vnd.api+json' }),
      ).accessToken,
    ).toBe('abc');
  });

  it.each<[string, HttpResponse, number, RegExp]>([
    [
      'a 200 HTML page',
      answer(200, '<html></html>', { 'content-type': 'text/html' }),
      1,
      /content type is "text\/html", not application\/json \(an HTML page\)/,
    ],
    [
      'a 200 with no content type',
      answer(200, { access_token: 'abc', token_type: 'bearer' }, {}),
      1,
      /content type is ""/,
    ],
    ['a 200 JSON without access_token', answer(200, { token_type: 'bearer' }), 1, /"access_token" is missing/],
    [
      '400 invalid_client',
      answer(400, { error: 'invalid_client', error_description: 'bad secret' }),
      4,
      /refused \(HTTP 400\): invalid_client — bad secret/,
    ],
    ['400 invalid_scope', answer(400, { error: 'invalid_scope' }), 2, /invalid_scope/],
    [
      '401 with only a challenge',
      answer(401, '', {
        'www-authenticate':
          'Bearer realm="Doorkeeper", error="invalid_client", error_description="Client \\"x\\" unknown"',
      }),
      4,
      /invalid_client — Client "x" unknown/,
    ],
    [
      '401 with a JSON body and a challenge: the body wins',
      answer(
        401,
        { error: 'unauthorized_client' },
        { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_client"' },
      ),
      4,
      /unauthorized_client/,
    ],
    ['500 with no body', answer(500, '', {}), 1, /failed on the server side \(HTTP 500\)/],
    [
      '400 with a text body',
      answer(400, 'nope', { 'content-type': 'text/plain' }),
      1,
      /HTTP 400 without an OAuth error body/,
    ],
    ['a 302', answer(302, '', { location: 'https://elsewhere.example' }), 1, /redirect \(HTTP 302\)/],
    ['a 201', answer(201, { access_token: 'abc', token_type: 'bearer' }), 1, /HTTP 201/],
  ])('%s → exit %i', (_, value, exitCode, message) => {
    const failure = failureOf(value);
    expect(failure.exitCode).toBe(exitCode);
    expect(failure.message).toMatch(/^the token endpoint /);
    expect(failure.message).toMatch(message);
  });
});

describe('parseChallengeError (RFC 6750 §3)', () => {
  it.each([
    ['Bearer error="invalid_token"', { error: 'invalid_token', description: undefined }],
    [
      'Bearer realm="x", error=invalid_client, error_description="a, b"',
      { error: 'invalid_client', description: 'a, b' },
    ],
    ['Bearer error_description="only a description"', undefined],
    ['Basic realm="x"', undefined],
    [undefined, undefined],
  ])('%j', (header, expected) => {
    expect(parseChallengeError(header)).toEqual(expected);
  });
});
