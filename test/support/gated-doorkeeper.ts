/**
 * A code-flow profile signed in at a real Doorkeeper 5.5 through a gate that can hold its answers,
 * and the check that no grant of the client is left live: what the signal, bound and race tests share.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from './cli.js';
import { startDoorkeeper, type DoorkeeperOptions, type TestDoorkeeper } from './doorkeeper.js';
import { startGateProxy, type GateProxy } from './gate-proxy.js';

type Json = Record<string, any>;

/** A code-flow profile signed in at a real Doorkeeper, through a gate that can hold its answers. */
export async function signedInThroughGate(options: DoorkeeperOptions = {}) {
  const doorkeeper = await startDoorkeeper(options);
  const gate = await startGateProxy(doorkeeper.baseUrl);
  const configDir = makeConfigDir();
  const env = doorkeeper.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_BASE_URL: gate.baseUrl }) as Record<
    string,
    string
  >;
  const login = await runCli(['login'], { env, timeoutMs: 60_000 });
  expect(login.code, login.stderr).toBe(0);
  return { doorkeeper, gate, configDir, env };
}

/** Makes the stored token stale (10 s left of two hours): the next use renews. */
export function makeStale(configDir: string): Json {
  const path = join(configDir, 'config.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as Json;
  const token = config.profiles.default.token;
  token.expires_at = new Date(Date.now() + 10_000).toISOString();
  token.obtained_at = new Date(Date.now() + 10_000 - 7_200_000).toISOString();
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return token as Json;
}

/** The token requests that reached the server through the gate (the login's code exchange among them). */
export const tokenRequestsSeen = (gate: GateProxy) =>
  gate.seen.filter((line) => line.startsWith('POST /oauth2/token')).length;

/** No access token Doorkeeper holds is live, and no refresh token it holds works (asked straight, not through the gate). */
export async function expectNoGrantLive(doorkeeper: TestDoorkeeper): Promise<void> {
  const tokens = await doorkeeper.tokens();
  expect(tokens.length).toBeGreaterThan(1);
  expect(tokens.filter((token) => !token.revoked && !token.expired).map((token) => token.id)).toEqual([]);
  for (const { refresh_token: refreshToken } of tokens) {
    if (refreshToken === null) continue;
    const answer = await fetch(`${doorkeeper.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: doorkeeper.clientId,
        client_secret: doorkeeper.clientSecret,
      }),
    });
    expect(answer.status, 'a refresh token still honoured after the grant ended').toBe(400);
  }
}
