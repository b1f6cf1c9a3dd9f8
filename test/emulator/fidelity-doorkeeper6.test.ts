/**
 * The emulator's `doorkeeper6` flavor against what is known of Doorkeeper 6.0 (6.0.0.beta1,
 * 2026-07): RFC 8414 metadata at /.well-known/oauth-authorization-server built from the
 * configuration (doorkeeper #1838), and with an `issuer` configured RFC 9207's `iss` in every
 * authorization response returned to the client, success or error, query or fragment, and
 * `authorization_response_iss_parameter_supported: true` (doorkeeper #1849). Token info, revoke and
 * introspection answer as in the `doorkeeper5` flavor. The other flavors serve no metadata and send
 * no `iss`, as Doorkeeper 5 does.
 */
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../support/emulator.js';

type Json = Record<string, any>;
const REDIRECT = 'http://127.0.0.1:51234/callback';

async function authorizeRedirect(baseUrl: string, clientId: string, params: Record<string, string>): Promise<URL> {
  const url = new URL('/oauth2/authorize', baseUrl);
  const all = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'service',
    state: 'xyz',
    ...params,
  };
  for (const [key, value] of Object.entries(all)) url.searchParams.set(key, value);
  const answer = await fetch(url, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location') ?? '');
}

describe('emulator fidelity: doorkeeper6', () => {
  it('serves RFC 8414 metadata: issuer, the four endpoints, scopes, response types and modes, grant types, auth methods, PKCE methods, iss supported', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper6' });
    const answer = await fetch(`${emulator.baseUrl}/.well-known/oauth-authorization-server`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const metadata = (await answer.json()) as Json;
    expect(metadata).toMatchObject({
      issuer: emulator.baseUrl,
      authorization_endpoint: `${emulator.baseUrl}/oauth2/authorize`,
      token_endpoint: `${emulator.baseUrl}/oauth2/token`,
      revocation_endpoint: `${emulator.baseUrl}/oauth2/revoke`,
      introspection_endpoint: `${emulator.baseUrl}/oauth2/introspect`,
      response_types_supported: ['code', 'token'],
      code_challenge_methods_supported: ['plain', 'S256'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'client_credentials', 'refresh_token']),
    );
  });

  it('sends iss with a code (query) and with a token (fragment)', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper6', autoApprove: true });
    const code = await authorizeRedirect(emulator.baseUrl, emulator.client.clientId, {
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
    });
    expect(code.searchParams.get('iss')).toBe(emulator.baseUrl);
    expect(code.searchParams.get('code')).not.toBeNull();
    const token = await authorizeRedirect(emulator.baseUrl, emulator.client.clientId, { response_type: 'token' });
    expect(new URLSearchParams(token.hash.slice(1)).get('iss')).toBe(emulator.baseUrl);
  });

  it.each(['spec', 'doorkeeper5'] as const)('%s: no metadata (404), no iss', async (flavor) => {
    const emulator = await startTestEmulator({ flavor, autoApprove: true });
    expect((await fetch(`${emulator.baseUrl}/.well-known/oauth-authorization-server`)).status).toBe(404);
    const code = await authorizeRedirect(emulator.baseUrl, emulator.client.clientId, {
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
    });
    expect(code.searchParams.has('iss')).toBe(false);
  });

  it("an issuer given (Doorkeeper's `issuer` setting) is the one named and sent", async () => {
    const emulator = await startTestEmulator({
      flavor: 'doorkeeper6',
      autoApprove: true,
      issuer: 'https://auth.example.test',
    });
    const metadata = (await (await fetch(`${emulator.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Json;
    expect(metadata.issuer).toBe('https://auth.example.test');
    expect(metadata.token_endpoint).toBe('https://auth.example.test/oauth2/token');
    const code = await authorizeRedirect(emulator.baseUrl, emulator.client.clientId, {
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
    });
    expect(code.searchParams.get('iss')).toBe('https://auth.example.test');
  });
});
