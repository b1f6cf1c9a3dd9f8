import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/exit-codes.js';
import { createHttpClient } from '../../../src/http/http-client.js';
import { plainAnswerReason, probeAuthorizationEndpoint } from '../../../src/oauth/authorization-probe.js';
import { resolveEndpoints } from '../../../src/oauth/endpoints.js';
import { rejectedBy } from '../../support/failure.js';
import { answer, startHostileServer, type Behaviour } from '../../support/hostile-server.js';

async function probeAgainst(behaviour: Behaviour) {
  const server = await startHostileServer({ 'GET /oauth2/authorize': behaviour });
  const endpoints = resolveEndpoints(server.baseUrl);
  return probeAuthorizationEndpoint(
    { endpoints, fetch: createHttpClient({ timeoutMs: 2000 }).fetch },
    new URL(`${endpoints.authorize.href}?client_id=x`),
  );
}

const DOORKEEPER_ERROR_PAGE = `<!DOCTYPE html><html><body><div id="container"><div class="page-header"><h1>An error has occurred</h1></div>
<main role="main"><pre>Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.</pre></main></div></body></html>`;

describe('probeAuthorizationEndpoint (server-behaviour.md authorize 4)', () => {
  it("Doorkeeper's error page (HTTP 200, the reason in <pre>): authorization_request_rejected, exit 2, the reason quoted", async () => {
    const error = await rejectedBy(() => probeAgainst(answer(200, DOORKEEPER_ERROR_PAGE, 'text/html')));
    expect(error.code).toBe('authorization_request_rejected');
    expect(exitCodeOf(error)).toBe(2);
    expect(error.message).toContain('Client authentication failed due to unknown client');
  });

  it.each([
    ['a sign-in page', answer(200, '<form action="/users/sign_in">', 'text/html'), 'page'],
    ['a redirect', answer(302, '', 'text/plain', { location: '/users/sign_in' }), 'redirect'],
  ])('%s lets the login go on', async (_what, behaviour, kind) => {
    expect((await probeAgainst(behaviour)).kind).toBe(kind);
  });

  it.each([
    [400, 2],
    [404, 2],
    [500, 1],
    [503, 1],
  ])('HTTP %i: exit %i', async (status, exitCode) => {
    const error = await rejectedBy(() => probeAgainst(answer(status, 'nope', 'text/plain')));
    expect(exitCodeOf(error)).toBe(exitCode);
  });
});

describe('plainAnswerReason', () => {
  it('quotes an OAuth JSON error or the start of a text/plain body; nothing for HTML or an empty body', () => {
    expect(plainAnswerReason('{"error":"invalid_request","error_description":"bad"}', 'application/json')).toBe(
      'invalid_request — bad',
    );
    expect(plainAnswerReason('no\u202eentry\r\n  here', 'text/plain; charset=utf-8')).toBe('no entry here');
    expect(plainAnswerReason('x'.repeat(300), 'text/plain')).toBe(`${'x'.repeat(200)}…`);
    expect(plainAnswerReason('<p>nope</p>', 'text/html')).toBeUndefined();
    expect(plainAnswerReason(' \n', 'text/plain')).toBeUndefined();
  });
});
