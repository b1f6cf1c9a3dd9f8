import { describe, expect, it } from 'vitest';
import { runHeader } from '../../src/commands/header.js';
import { runToken } from '../../src/commands/token.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { failureOf, rejectedBy } from '../support/failure.js';
import { writeProfiles } from '../support/profiles.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const at = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();
const TOKEN = 'tok-0123456789abcdefghijklmnop';

function withStoredToken(
  expiresAt: string | undefined,
  profile = 'default',
  grant = 'authorization_code',
): TestContext {
  const ctx = createTestContext({ nowMs: NOW });
  const token = { access_token: TOKEN, token_type: 'bearer', grant, obtained_at: at(-60), scope: 'service' };
  writeProfiles(ctx.configDir, {
    [profile]: {
      base_url: 'http://127.0.0.1:9',
      token: expiresAt === undefined ? token : { ...token, expires_at: expiresAt },
    },
  });
  return ctx;
}

describe('runToken and runHeader (in-process, fixed clock)', () => {
  it('prints the bare token; --json prints the token document with the time left by the fixed clock', async () => {
    const ctx = withStoredToken(at(3600));
    await runToken({ renew: true, timeout: 5, minTtl: 0 }, ctx);
    expect(ctx.stdout.text()).toBe(`${TOKEN}\n`);
    const json = createTestContext({ nowMs: NOW });
    writeProfiles(json.configDir, {
      default: {
        token: {
          access_token: TOKEN,
          token_type: 'bearer',
          grant: 'authorization_code',
          obtained_at: at(-60),
          expires_at: at(3600),
          scope: 'service',
        },
      },
    });
    await runToken({ renew: true, timeout: 5, minTtl: 0, json: true }, json);
    expect(JSON.parse(json.stdout.text())).toEqual({
      schema_version: 1,
      access_token: TOKEN,
      token_type: 'bearer',
      scope: 'service',
      expires_in: 3600,
      expires_at: '2026-11-23T13:00:00Z',
      grant: 'authorization_code',
      profile: 'default',
    });
  });

  it.each([
    [
      'one second past expiry',
      at(-1),
      0,
      'token_expired',
      'the token of profile "default" expired at 2026-11-23T11:59:59Z',
    ],
    [
      'less than --min-ttl left',
      at(299),
      300,
      'token_lifetime_too_short',
      'the token of profile "default" has 299 s left, less than --min-ttl 300',
    ],
  ])('%s: exit 4 with the next step, nothing on stdout', async (_what, expiresAt, minTtl, code, message) => {
    const ctx = withStoredToken(expiresAt);
    const error = await rejectedBy(() => runToken({ renew: true, timeout: 5, minTtl }, ctx));
    expect(failureOf(error)).toEqual({ code, exitCode: 4, message });
    expect(error.hint).toBe('get a new one: mmauth login');
    expect(ctx.stdout.text()).toBe('');
  });

  it('names the profile and the command of the token’s origin in the hint', async () => {
    const ctx = withStoredToken(at(-5), 'ci', 'client_credentials');
    const error = await rejectedBy(() => runToken({ renew: true, timeout: 5, minTtl: 0, profile: 'ci' }, ctx));
    expect(error.hint).toBe('get a new one: mmauth client-credentials --profile ci');
  });

  it('a token with no expiry always passes --min-ttl; exactly --min-ttl left passes too', async () => {
    const forever = withStoredToken(undefined);
    await runToken({ renew: true, timeout: 5, minTtl: 999_999 }, forever);
    expect(forever.stdout.text()).toBe(`${TOKEN}\n`);
    const exact = withStoredToken(at(300));
    await runToken({ renew: true, timeout: 5, minTtl: 300 }, exact);
    expect(exact.stdout.text()).toBe(`${TOKEN}\n`);
  });

  it('no such profile: unknown_profile (exit 4) listing the known ones', async () => {
    const ctx = withStoredToken(at(60), 'work');
    const error = await rejectedBy(() => runToken({ renew: true, timeout: 5, minTtl: 0, profile: 'wrok' }, ctx));
    expect(failureOf(error)).toEqual({
      code: 'unknown_profile',
      exitCode: 4,
      message: 'not logged in: there is no profile "wrok"; known profiles: "work"',
    });
  });

  it('a profile without a token: not_logged_in (exit 4)', async () => {
    const ctx = createTestContext({ nowMs: NOW });
    writeProfiles(ctx.configDir, { default: { base_url: 'http://127.0.0.1:9' } });
    const error = await rejectedBy(() => runToken({ renew: true, timeout: 5, minTtl: 0 }, ctx));
    expect(failureOf(error)).toEqual({
      code: 'not_logged_in',
      exitCode: 4,
      message: 'not logged in: profile "default" has no stored token',
    });
  });

  it('MMAUTH_TOKEN wins, and its lifetime is unknown: --json shows nulls', async () => {
    const ctx = createTestContext({ nowMs: NOW, env: { MMAUTH_TOKEN: 'from-env-0123456789' } });
    await runToken({ renew: true, timeout: 5, minTtl: 999, json: true }, ctx);
    expect(JSON.parse(ctx.stdout.text())).toMatchObject({
      access_token: 'from-env-0123456789',
      expires_in: null,
      grant: null,
    });
  });

  it('header prints the Authorization field line, or a headers object with --json', async () => {
    const line = withStoredToken(at(3600));
    await runHeader({ renew: true, timeout: 5, minTtl: 0 }, line);
    expect(line.stdout.text()).toBe(`Authorization: Bearer ${TOKEN}\n`);
    const json = withStoredToken(at(3600));
    await runHeader({ renew: true, timeout: 5, minTtl: 0, json: true }, json);
    // A bare map of headers, without schema_version (decisions 46).
    expect(JSON.parse(json.stdout.text())).toEqual({ Authorization: `Bearer ${TOKEN}` });
  });
});
