import { describe, expect, it } from 'vitest';
import { runStatus } from '../../src/commands/status.js';
import { createTestContext } from '../support/context.js';
import { failureOf, rejectedBy } from '../support/failure.js';
import { writeProfiles } from '../support/profiles.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const at = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();
const token = (accessToken: string, expiresAt: string | undefined, grant: string) => ({
  access_token: accessToken,
  token_type: 'bearer',
  grant,
  obtained_at: at(-60),
  scope: 'service',
  ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
});

function threeProfiles() {
  const ctx = createTestContext({ nowMs: NOW });
  writeProfiles(ctx.configDir, {
    default: {
      base_url: 'http://127.0.0.1:9',
      client_id: 'app',
      client_secret: 's3cret-s3cret',
      token: token('A'.repeat(30), at(7199), 'authorization_code'),
    },
    ci: {
      base_url: 'http://127.0.0.1:9',
      client_id: 'app',
      token: token('B'.repeat(30), at(-10), 'client_credentials'),
    },
    pat: { base_url: 'http://127.0.0.1:9', token: token('C'.repeat(30), undefined, 'personal') },
  });
  return ctx;
}

describe('runStatus (in-process, fixed clock)', () => {
  it('lists every profile for people, sorted, with the state by the fixed clock', async () => {
    const ctx = threeProfiles();
    await runStatus({ timeout: 5 }, ctx);
    expect(ctx.stdout.text()).toBe('');
    expect(ctx.stderr.text().replaceAll(ctx.configDir, '<dir>')).toMatchInlineSnapshot(`
      "Config file: <dir>/config.json
      Profile: default (the default profile)

        ci
        base URL:      http://127.0.0.1:9
        client id:     app
        grant:         client_credentials
        scopes:        service
        token:         expired at 2026-11-23T11:59:50Z   BBBB…BBBB
        obtained:      2026-11-23T11:59:00Z (1m ago)
        client secret: not stored
        credentials:   in the file, plain text
        renews with:   none

      ▸ default (selected)
        base URL:      http://127.0.0.1:9
        client id:     app
        grant:         authorization_code
        scopes:        service
        token:         valid (by its expiry; not checked), 1h 59m left (until 2026-11-23T13:59:59Z)   AAAA…AAAA
        obtained:      2026-11-23T11:59:00Z (1m ago)
        client secret: stored
        credentials:   in the file, plain text
        renews with:   none

        pat
        base URL:      http://127.0.0.1:9
        client id:     (not set)
        grant:         personal
        scopes:        service
        token:         valid (no expiry; not checked)   CCCC…CCCC
        obtained:      2026-11-23T11:59:00Z (1m ago)
        client secret: not stored
        credentials:   in the file, plain text
        renews with:   none
      "
    `);
  });

  it('--json: one document with every profile; never the secret or the token', async () => {
    const ctx = threeProfiles();
    await runStatus({ json: true, timeout: 5 }, ctx);
    const json = JSON.parse(ctx.stdout.text());
    expect(json).toMatchObject({ selected: 'default', selected_by: 'default', directory_file: null });
    expect(
      json.profiles.map((p: { name: string; state: string; expires_in: number | null }) => [
        p.name,
        p.state,
        p.expires_in,
      ]),
    ).toEqual([
      ['ci', 'expired', 0],
      ['default', 'valid', 7199],
      ['pat', 'no_expiry', null],
    ]);
    expect(ctx.stdout.text()).not.toMatch(/s3cret|AAAA|BBBB|CCCC/);
  });

  it('--profile NAME: that profile only, selected by the flag', async () => {
    const ctx = threeProfiles();
    await runStatus({ json: true, profile: 'pat', timeout: 5 }, ctx);
    const json = JSON.parse(ctx.stdout.text());
    expect(json).toMatchObject({ selected: 'pat', selected_by: 'flag' });
    expect(json.profiles.map((p: { name: string }) => p.name)).toEqual(['pat']);
  });

  it.each([
    [
      'ci',
      'token_expired',
      'the selected profile "ci" has an expired token',
      'run `mmauth client-credentials --profile ci`',
    ],
  ])('exit 4 after printing when the selected profile %s has no valid token', async (profile, code, message, hint) => {
    const ctx = threeProfiles();
    const error = await rejectedBy(() => runStatus({ profile, timeout: 5 }, ctx));
    expect(failureOf(error)).toEqual({ code, exitCode: 4, message });
    expect(error.hint).toBe(hint);
    expect(ctx.stderr.text()).toContain('Config file:');
  });

  it('an unknown --profile: unknown_profile (exit 4) listing the known ones', async () => {
    const ctx = threeProfiles();
    const error = await rejectedBy(() => runStatus({ profile: 'nosuch', timeout: 5 }, ctx));
    expect(failureOf(error)).toMatchObject({ code: 'unknown_profile', exitCode: 4 });
    expect(error.message).toContain('"ci", "default", "pat"');
  });
});
