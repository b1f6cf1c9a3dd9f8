import { describe, expect, it } from 'vitest';
import { runLogin } from '../../src/commands/login/login.js';
import { runRefresh } from '../../src/commands/refresh.js';
import { isFresh, renewToken } from '../../src/grant/renewal.js';
import { createTestContext, followAuthorizeRedirect } from '../support/context.js';
import { startTestEmulator } from '../support/emulator.js';
import { failureHintOf, failureOf, rejectedBy } from '../support/failure.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const token = (obtainedS: number, expiresS: number | undefined) => ({
  accessToken: 't'.repeat(20),
  tokenType: 'bearer',
  scope: 'service',
  grant: 'authorization_code' as const,
  obtainedAt: new Date(NOW + obtainedS * 1000).toISOString(),
  expiresAt: expiresS === undefined ? undefined : new Date(NOW + expiresS * 1000).toISOString(),
});

describe('isFresh: max(--min-ttl, min(60 s, half the issued lifetime)) left', () => {
  it.each([
    ['7200 s token, 61 s left', token(-7139, 61), 0, true],
    ['7200 s token, 59 s left', token(-7141, 59), 0, false],
    ['4 s token, 2 s left (half its lifetime)', token(-2, 2), 0, true],
    ['4 s token, 1 s left', token(-3, 1), 0, false],
    ['7200 s token, 200 s left, --min-ttl 300', token(-7000, 200), 300, false],
    ['no expiry, --min-ttl 999999', token(-10, undefined), 999_999, true],
    ['expired, with a lifetime that was never positive', token(0, -5), 0, false],
  ])('%s: %s', (_what, stored, minTtl, expected) => {
    expect(isFresh(stored, NOW, minTtl)).toBe(expected);
  });
});

describe('renewToken: one renewal across processes (in-process, against the emulator)', () => {
  async function loggedIn() {
    const emulator = await startTestEmulator({ autoApprove: true });
    const ctx = createTestContext({
      nowMs: NOW,
      browser: followAuthorizeRedirect(),
      env: {
        MMAUTH_BASE_URL: emulator.baseUrl,
        MMAUTH_CLIENT_ID: 'mmauth-demo',
        MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      },
    });
    await runLogin({ timeout: 5, wait: 5, browser: true, verify: true, probe: true }, ctx);
    return {
      emulator,
      ctx,
      refreshes: () => emulator.requests.filter((r) => r.body.includes('grant_type=refresh_token')).length,
    };
  }

  it('a token another process already renewed is used as it is: no request, even though this process read the old one', async () => {
    const { ctx, refreshes } = await loggedIn();
    const store = await ctx.store();
    const seen = (await store.read('default'))?.token;
    if (seen === undefined) throw new Error('no token');
    await runRefresh({ timeout: 5 }, ctx);
    expect(refreshes()).toBe(1);
    const current = (await store.read('default'))?.token;
    const renewed = await renewToken(seen, { profileName: 'default', store, timeoutSeconds: 5 }, ctx);
    expect(renewed.accessToken).toBe(current?.accessToken);
    expect(renewed.refreshToken).toBe(current?.refreshToken);
    expect(refreshes()).toBe(1);
  });

  it('a profile that cannot renew: not_renewable (exit 4) with the next step', async () => {
    const emulator = await startTestEmulator();
    const ctx = createTestContext({ nowMs: NOW, env: { MMAUTH_TOKEN: '' } });
    const { writeProfiles, storedToken, inS } = await import('../support/profiles.js');
    writeProfiles(ctx.configDir, {
      imp: { base_url: emulator.baseUrl, client_id: 'x', token: storedToken('i'.repeat(30), inS(-5), 'implicit') },
    });
    const error = await rejectedBy(() => runRefresh({ timeout: 5, profile: 'imp' }, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'not_renewable', exitCode: 4 });
    expect(failureHintOf(error, { profileName: 'imp', origin: 'implicit' })).toBe(
      'get a new one: mmauth login --implicit --profile imp',
    );
    expect(emulator.requests).toHaveLength(0);
  });
});
