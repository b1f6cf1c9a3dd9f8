/**
 * The code flow's exchange (oauth4webapi's request and processing, then mmauth's own field checks)
 * against the same misbehaving token endpoints as the client credentials path: each gives one
 * MmauthError with the documented exit code and a message naming what was wrong.
 */
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/exit-codes.js';
import { createHttpClient } from '../../../src/http/http-client.js';
import { exchangeAuthorizationCode, validateAuthorizationResponse } from '../../../src/oauth/authorization-code.js';
import { resolveEndpoints } from '../../../src/oauth/endpoints.js';
import { rejectedBy } from '../../support/failure.js';
import { CASES, GOOD_TOKEN, ROUTE } from '../../support/hostile-cases.js';
import { json, neverAnswer, stallBody, startHostileServer } from '../../support/hostile-server.js';

// The transport's timeouts are the same on every path (test/e2e/hostile-servers.test.ts has them).
const TOKEN_CASES = CASES.filter(
  ([, endpoint, behaviour]) => endpoint === 'token' && behaviour !== neverAnswer && behaviour !== stallBody,
);

async function exchangeAgainst(routes: Parameters<typeof startHostileServer>[0]) {
  const hostile = await startHostileServer(routes);
  const endpoints = resolveEndpoints(hostile.baseUrl);
  const server = { endpoints, fetch: createHttpClient({ timeoutMs: 2000 }).fetch };
  const request = {
    url: new URL(endpoints.authorize),
    state: 's-1',
    codeVerifier: 'v'.repeat(43),
    redirectUri: 'http://127.0.0.1/callback',
  };
  const parameters = await validateAuthorizationResponse(
    endpoints,
    'app',
    new URLSearchParams('code=c-1&state=s-1'),
    request,
  );
  return {
    hostile,
    exchange: () =>
      exchangeAuthorizationCode(server, { clientId: 'app', clientSecret: 'secret-0123456789' }, parameters, request),
  };
}

describe('exchangeAuthorizationCode against hostile token endpoints', () => {
  it('a well-formed answer gives the token', async () => {
    const { exchange } = await exchangeAgainst({ [ROUTE.token]: json(GOOD_TOKEN) });
    expect(await exchange()).toEqual({
      accessToken: GOOD_TOKEN.access_token,
      tokenType: 'bearer',
      expiresInSeconds: 7200,
      scope: 'service',
    });
  });

  it.each(TOKEN_CASES)(
    '%s',
    async (_what, _endpoint, behaviour, exitCode, message) => {
      const { hostile, exchange } = await exchangeAgainst({
        [ROUTE.token]: behaviour,
        'POST /elsewhere': json(GOOD_TOKEN),
      });
      const error = await rejectedBy(exchange);
      expect(exitCodeOf(error), error.message).toBe(exitCode);
      expect(error.message).toMatch(message);
      expect(hostile.requests.filter((r) => r.url === '/elsewhere')).toHaveLength(0);
    },
    10_000,
  );
});
