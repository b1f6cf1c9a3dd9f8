import { describe, expect, it } from 'vitest';
import { runClientCredentials } from '../../src/commands/client-credentials.js';
import { runInfo } from '../../src/commands/info.js';
import { createTestContext } from '../support/context.js';
import { startTestEmulator } from '../support/emulator.js';
import { failureOf, rejectedBy } from '../support/failure.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

describe('runInfo (in-process, against the emulator)', () => {
  it.each(['spec', 'doorkeeper5'] as const)('reports what token info says (%s flavor)', async (flavor) => {
    const emulator = await startTestEmulator({ flavor });
    const env = { MMAUTH_BASE_URL: emulator.baseUrl, MMAUTH_TOKEN: emulator.personalAccessToken };
    const ctx = createTestContext({ nowMs: NOW, env });
    await runInfo({ timeout: 5, json: true }, ctx);
    expect(JSON.parse(ctx.stdout.text())).toEqual({
      schema_version: 1,
      resource_owner_id: 42,
      scope: ['service', 'userinfo.email'],
      expires_in: null,
      expires_at: null,
      application: { uid: flavor === 'spec' ? 2 : 'personal-access-tokens' },
      created_at: flavor === 'spec' ? null : expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(ctx.stderr.text()).toContain(`✓ Token is active on ${emulator.baseUrl}`);
    expect(emulator.requests[0]?.headers.authorization).toBe(`Bearer ${emulator.personalAccessToken}`);
  });

  it('the stored client token: owner none, exit 0; once the server forgets it: token_inactive (exit 4)', async () => {
    const emulator = await startTestEmulator();
    const ctx = createTestContext({
      nowMs: NOW,
      env: {
        MMAUTH_BASE_URL: emulator.baseUrl,
        MMAUTH_CLIENT_ID: 'mmauth-demo',
        MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      },
    });
    await runClientCredentials({ timeout: 5, save: true }, ctx);
    await runInfo({ timeout: 5 }, ctx);
    expect(ctx.stderr.text()).toContain('owner:         (none: client token)');
    emulator.advanceSeconds(7201);
    const error = await rejectedBy(() => runInfo({ timeout: 5 }, ctx));
    expect(failureOf(error)).toEqual({
      code: 'token_inactive',
      exitCode: 4,
      message: 'token is expired, revoked or invalid (token info answered 401)',
    });
  });

  it('nothing stored and no MMAUTH_TOKEN: not_logged_in before any request', async () => {
    const emulator = await startTestEmulator();
    const ctx = createTestContext({ nowMs: NOW, env: { MMAUTH_BASE_URL: emulator.baseUrl } });
    const error = await rejectedBy(() => runInfo({ timeout: 5 }, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'unknown_profile', exitCode: 4 });
    expect(error.hint).toBe(
      'check --profile / MMAUTH_PROFILE, or create it: `mmauth login` or `mmauth client-credentials`',
    );
    expect(emulator.requests).toHaveLength(0);
  });
});
