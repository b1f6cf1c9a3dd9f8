import { describe, expect, it } from 'vitest';
import { runClientCredentials } from '../../src/commands/client-credentials.js';
import { createTestContext } from '../support/context.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { failureOf, rejectedBy } from '../support/failure.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

async function setUp(extraEnv: Record<string, string> = {}) {
  const emulator = await startTestEmulator();
  const ctx = createTestContext({
    nowMs: NOW,
    env: {
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      ...extraEnv,
    },
  });
  return { emulator, ctx };
}

const defaults = { timeout: 5, save: true } as const;

describe('runClientCredentials (in-process, against the emulator)', () => {
  it('asks the token endpoint with the secret in the body and stores the profile', async () => {
    const { emulator, ctx } = await setUp();
    await runClientCredentials({ ...defaults, json: true, scope: 'service' }, ctx);
    const json = JSON.parse(ctx.stdout.text());
    expect(json).toMatchObject({
      token_type: 'bearer',
      scope: 'service',
      expires_in: 7200,
      expires_at: '2026-11-23T14:00:00Z',
      grant: 'client_credentials',
      profile: 'default',
    });
    const form = new URLSearchParams(emulator.requests[0]?.body);
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
      scope: 'service',
    });
    expect(readConfig(ctx.configDir)).toMatchObject({
      profiles: {
        default: {
          base_url: emulator.baseUrl,
          client_id: 'mmauth-demo',
          client_secret: emulator.client.clientSecret,
          token: { access_token: json.access_token, grant: 'client_credentials' },
        },
      },
    });
    expect(ctx.stderr.text()).toContain(
      `✓ Got a client credentials token from ${emulator.baseUrl} (stored in profile "default")`,
    );
  });

  it('--no-save stores nothing', async () => {
    const { ctx } = await setUp();
    await runClientCredentials({ ...defaults, save: false }, ctx);
    expect(ctx.stderr.text()).toContain('(not stored)');
    expect((await ctx.store()).list()).toEqual([]);
  });

  it.each([
    ['a wrong secret', { MMAUTH_CLIENT_SECRET: 'wrong' }, 'service', 4, 'invalid_client', 401],
    ['an unknown scope', {}, 'bogus', 2, 'invalid_scope', 400],
  ])('%s: token_endpoint_error, exit %#, nothing stored', async (_what, env, scope, exitCode, oauthError, status) => {
    const { ctx } = await setUp(env);
    const error = await rejectedBy(() => runClientCredentials({ ...defaults, scope }, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'token_endpoint_error', exitCode });
    expect(error).toMatchObject({ oauthError, status });
    expect((await ctx.store()).list()).toEqual([]);
  });

  it('a server that is down: connection_failed (exit 3) naming the request', async () => {
    const { emulator, ctx } = await setUp();
    await emulator.close();
    const error = await rejectedBy(() => runClientCredentials({ ...defaults }, ctx));
    expect(failureOf(error)).toEqual({
      code: 'connection_failed',
      exitCode: 3,
      message: `POST ${emulator.baseUrl}/oauth2/token: connection refused`,
    });
  });
});
