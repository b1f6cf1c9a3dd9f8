import { describe, expect, it } from 'vitest';
import {
  redactBody,
  redactForm,
  redactHeader,
  redactJson,
  redactUrl,
  REDACTED,
  SecretScrubber,
} from '../../../src/http/redact.js';

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

describe('redaction of what odd servers send (A9)', () => {
  const SECRET = 'S3cr3t/Value+with space';
  it.each([
    [
      'a token in malformed JSON (a trailing comma)',
      '{"access_token":"tok-0123456789",}',
      'application/json',
      'tok-0123456789',
    ],
    ['a form-encoded token sent as text/plain', 'access_token=tok-0123456789&x=1', 'text/plain', 'tok-0123456789'],
    ['a token under accessToken', '{"accessToken":"tok-0123456789"}', 'application/json', 'tok-0123456789'],
    ['a token under api_key, in text', 'api_key: tok-0123456789', 'text/plain', 'tok-0123456789'],
  ])('%s', (_what, body, contentType, secret) => {
    const redacted = redactBody(body, contentType, new SecretScrubber());
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(REDACTED);
  });

  it.each([
    ['raw', SECRET],
    ['%-encoded, upper case', encodeURIComponent(SECRET)],
    ['%-encoded, lower case', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
    ['form-encoded', new URLSearchParams({ s: SECRET }).toString().slice(2)],
    ['JSON-escaped with \\u', [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
    ['JSON-escaped slash', SECRET.replace('/', '\\/')],
    ['Base64', Buffer.from(SECRET).toString('base64')],
    [
      'Base64 of id:secret',
      Buffer.from(`app:${new URLSearchParams({ s: SECRET }).toString().slice(2)}`).toString('base64'),
    ],
  ])('a remembered secret echoed %s is scrubbed', (_what, echoed) => {
    const scrubber = new SecretScrubber();
    scrubber.remember(SECRET);
    // RFC 6749 §2.3.1: Basic carries the form-encoded id and secret; the whole credential is remembered.
    const credential = Buffer.from(`app:${new URLSearchParams({ s: SECRET }).toString().slice(2)}`).toString('base64');
    redactHeader('authorization', `Basic ${credential}`, scrubber);
    expect(scrubber.scrub(`echo: ${echoed} end`)).toBe(`echo: ${REDACTED} end`);
  });
});
