/**
 * The permanent attack suite, second table (issue 22's attack run): another user on the machine, a
 * hostile server, a planted file. Each row is the attack as it was tried, and what must hold now:
 * the exit code, that nothing secret was printed or sent, and that nothing stored was lost.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../support/emulator.js';

/** A raw request with the Host header as given (fetch would set its own). */
function rawRequest(port: number, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the emulator (users run it on their own machines)', () => {
  it('18: a foreign Host (DNS rebinding) is refused on every route; its own address is served', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    for (const path of ['/oauth2/authorize?client_id=x', '/oauth2/token/info', '/api/me']) {
      expect(await rawRequest(emulator.port, path, 'attacker.example')).toBe(400);
      expect(await rawRequest(emulator.port, path, `attacker.example:${emulator.port}`)).toBe(400);
    }
    expect(await rawRequest(emulator.port, '/oauth2/token/info', `127.0.0.1:${emulator.port}`)).toBe(401);
    expect(await rawRequest(emulator.port, '/oauth2/token/info', `localhost:${emulator.port}`)).toBe(401);
  });

  it('19: memory stays bounded: unauthenticated authorize requests keep at most MAX_SESSIONS sessions, anonymous ones expire', async () => {
    const { MAX_SESSIONS } = await import('../../src/emulator/state.js');
    const emulator = await startTestEmulator();
    for (let i = 0; i < MAX_SESSIONS + 50; i++) emulator.state.session(undefined);
    expect(emulator.state.sizes().sessions).toBe(MAX_SESSIONS);
    emulator.advanceSeconds(601);
    emulator.state.session(undefined);
    expect(emulator.state.sizes().sessions).toBe(1);
  });

  it('3: a code issued without a PKCE challenge is refused when a verifier comes with it (invalid_grant), as the real server does', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const redirectUri = 'http://127.0.0.1:40000/callback';
    const url = new URL('/oauth2/authorize', emulator.baseUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: emulator.client.clientId,
      redirect_uri: redirectUri,
      state: 's',
    }).toString();
    const approved = await fetch(url, { redirect: 'manual' });
    const code = new URL(approved.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const verifier = 'v'.repeat(43);
    const response = await fetch(`${emulator.baseUrl}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_grant');
  });
});
