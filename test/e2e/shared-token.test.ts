/**
 * A server that hands back the token already held (Doorkeeper's `reuse_access_token`) has a shared
 * token (decisions 70): against a real Doorkeeper 5.5 issuing 20-second client-credentials tokens,
 * a `mmauth token` loop for 60 s sends at most one token request per lifetime (one more to learn
 * that the server shares), never exits 4, and never hands out a token the server has ended; doctor
 * then names reuse_access_token.
 */
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { startDoorkeeper } from '../support/doorkeeper.js';
import { startGateProxy } from '../support/gate-proxy.js';

describe('reuse_access_token: a shared token', () => {
  it('a `mmauth token` loop for 60 s on 20-s tokens: at most one token request per lifetime (and one to learn), never exit 4, every token handed out still valid', async () => {
    const doorkeeper = await startDoorkeeper({ reuseAccessToken: true, accessTokenExpiresInS: 20 });
    const gate = await startGateProxy(doorkeeper.baseUrl);
    const configDir = makeConfigDir();
    const env = doorkeeper.env(configDir, { MMAUTH_BASE_URL: gate.baseUrl }) as Record<string, string>;
    const first = await runCli(['client-credentials'], { env, timeoutMs: 30_000 });
    expect(first.code, first.stderr).toBe(0);
    const tokenRequests = () => gate.seen.filter((line) => line.startsWith('POST /oauth2/token')).length;
    const before = tokenRequests();
    const startedMs = Date.now();
    const failures: string[] = [];
    const handedOut: Array<{ token: string; atMs: number }> = [];
    while (Date.now() - startedMs < 60_000) {
      const run = await runCli(['token'], { env, timeoutMs: 30_000 });
      if (run.code !== 0) failures.push(`exit ${String(run.code)}: ${run.stderr.trim()}`);
      else handedOut.push({ token: run.stdout.trim(), atMs: Date.now() });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(failures).toEqual([]);
    // Three lifetimes in 60 s, and one request at the first token's half-life that taught mmauth the server shares.
    expect(tokenRequests() - before).toBeLessThanOrEqual(4);
    expect(tokenRequests() - before).toBeGreaterThanOrEqual(2);
    // Every token handed out was still live on the server when handed out (its record's expiry after that moment).
    const records = await doorkeeper.tokens();
    for (const { token, atMs } of handedOut) {
      const record = records.find((candidate) => candidate.token === token);
      expect(record, 'a token the server issued').toBeDefined();
      expect(record?.revoked_at_ms === null || (record?.revoked_at_ms ?? 0) > atMs).toBe(true);
    }
    // doctor names the option the server runs, not the other one (revoke_previous_client_credentials_token).
    const doctor = await runCli(['doctor', '--json'], { env, timeoutMs: 30_000 });
    const check = (
      (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; detail: string }> }).checks ?? []
    ).find((candidate) => candidate.name === 'token');
    expect(check?.detail).toContain('reuse_access_token');
    expect(check?.detail).not.toContain('revoke_previous');
  }, 120_000);
});
