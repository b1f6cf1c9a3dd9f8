/**
 * Property-based tests (fast-check): whatever a server or a browser sends, the parsers return a
 * valid result or throw one of mmauth's typed errors (an MmauthError whose code maps to an exit code), never
 * anything else. FUZZ_RUNS sets the runs per property (default 3,000).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/exit-codes.js';
import { isMmauthError } from '../../../src/errors.js';
import { validateAuthorizationResponse } from '../../../src/oauth/authorization-code.js';
import { resolveEndpoints } from '../../../src/oauth/endpoints.js';
import { implicitParameters, parseImplicitAuthorizationResponse } from '../../../src/oauth/implicit.js';
import { readJsonBody } from '../../../src/oauth/json-body.js';
import { parseTokenInfo, parseTokenResponse } from '../../../src/oauth/parse.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const endpoints = resolveEndpoints('http://127.0.0.1:4010');
const request = {
  url: new URL(endpoints.authorize),
  state: 'the-state',
  codeVerifier: 'v'.repeat(43),
  redirectUri: 'http://127.0.0.1/callback',
};

/** Runs `parse`; passes if it returns or throws an MmauthError, fails on any other throw. */
function isTypedOutcome(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (error) {
    return isMmauthError(error) && typeof exitCodeOf(error) === 'number' && error.message.length > 0;
  }
}

async function isTypedOutcomeAsync(parse: () => Promise<unknown>): Promise<boolean> {
  try {
    await parse();
    return true;
  } catch (error) {
    return isMmauthError(error) && typeof exitCodeOf(error) === 'number';
  }
}

/** JSON-ish values with the token fields present more often than chance would put them. */
const field = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.constant(undefined),
);
const tokenLike = fc.record(
  {
    access_token: field,
    token_type: fc.oneof(field, fc.constantFrom('Bearer', 'bearer', 'BEARER', 'mac')),
    expires_in: fc.oneof(field, fc.integer({ min: -10, max: 1e12 })),
    scope: fc.oneof(field, fc.constantFrom('service', 'service userinfo.email', '')),
  },
  { requiredKeys: [] },
);
const infoLike = fc.record(
  {
    resource_owner_id: field,
    scope: field,
    expires_in_seconds: field,
    expires_in: field,
    application: fc.oneof(field, fc.record({ uid: field })),
    created_at: field,
  },
  { requiredKeys: [] },
);
const callbackParams = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom(
        'code',
        'state',
        'error',
        'error_description',
        'iss',
        'access_token',
        'token_type',
        'expires_in',
        'scope',
      ),
      fc.string(),
    ),
    fc.oneof(fc.string(), fc.constant('the-state'), fc.constant('http://127.0.0.1:4010')),
  ),
  { maxLength: 8 },
);

describe(`parsers under fuzz (${RUNS} runs per property)`, () => {
  it('parseTokenResponse: a valid token or a typed error, and a valid token is really valid', () => {
    fc.assert(
      fc.property(fc.oneof(tokenLike, fc.anything()), (json) => {
        let parsed;
        try {
          parsed = parseTokenResponse(json);
        } catch (error) {
          return isMmauthError(error);
        }
        return (
          typeof parsed.accessToken === 'string' &&
          /^[\x20-\x7e]+$/.test(parsed.accessToken) &&
          parsed.tokenType === 'bearer' &&
          (parsed.expiresInSeconds === undefined ||
            (Number.isInteger(parsed.expiresInSeconds) && parsed.expiresInSeconds >= 0))
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('parseTokenInfo: a record or a typed error', () => {
    fc.assert(
      fc.property(fc.oneof(infoLike, fc.anything()), (json) => isTypedOutcome(() => parseTokenInfo(json))),
      { numRuns: RUNS },
    );
  });

  it('readJsonBody: any bytes give a JSON value or a typed error (invalid UTF-8 refused)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.json().map((text) => new TextEncoder().encode(text)),
        ),
        (bytes) => isTypedOutcomeAsync(async () => readJsonBody(bytes, 'the token endpoint')),
      ),
      { numRuns: RUNS },
    );
  });

  it('validateAuthorizationResponse (code flow): any redirect parameters give validated parameters or a typed error', async () => {
    await fc.assert(
      fc.asyncProperty(callbackParams, async (pairs) => {
        const params = new URLSearchParams(pairs);
        let validated: URLSearchParams;
        try {
          validated = await validateAuthorizationResponse(endpoints, 'mmauth-demo', params, request);
        } catch (error) {
          return isMmauthError(error);
        }
        // Accepted only with the right state and a code.
        return validated.get('state') === 'the-state' && (validated.get('code') ?? '') !== '';
      }),
      { numRuns: RUNS },
    );
  });

  it('parseImplicitAuthorizationResponse: any fragment gives a token only with the right state, else a typed error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          callbackParams.map((pairs) => new URLSearchParams(pairs).toString()),
          fc.string(),
        ),
        (fragment) => {
          const params = implicitParameters(new URL(`http://127.0.0.1:9/callback#${fragment}`));
          try {
            parseImplicitAuthorizationResponse(endpoints, params, 'the-state');
          } catch (error) {
            return isMmauthError(error);
          }
          return params.get('state') === 'the-state' && params.get('error') === null;
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the properties can fail: a parser that crashes is caught', () => {
    expect(() =>
      fc.assert(
        fc.property(fc.anything(), (json) => isTypedOutcome(() => (json as { a: { b: number } }).a.b)),
        { numRuns: 50 },
      ),
    ).toThrow();
  });
});
