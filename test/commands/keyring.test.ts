/**
 * The storing commands and `token` over a keyring, in-process (fixed clock, an in-memory keyring:
 * the real addon over D-Bus is tested end to end in test/e2e/keyring.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClientCredentials } from '../../src/commands/client-credentials.js';
import { describeFailure } from '../../src/failure/failure-report.js';
import { runToken } from '../../src/commands/token.js';
import { createTestContext } from '../support/context.js';
import { startTestEmulator } from '../support/emulator.js';
import { rejectedBy } from '../support/failure.js';
import { memoryKeyring, type MemoryKeyring } from '../support/memory-keyring.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const storing = { timeout: 5, save: true } as const;
const token = { renew: true, timeout: 5, minTtl: 0 } as const;

async function setUp(keyring: MemoryKeyring | undefined, extraEnv: Record<string, string> = {}) {
  const emulator = await startTestEmulator();
  const env = {
    MMAUTH_BASE_URL: emulator.baseUrl,
    MMAUTH_CLIENT_ID: emulator.client.clientId,
    MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    ...extraEnv,
  };
  const ctx = createTestContext({ nowMs: NOW, env, ...(keyring === undefined ? {} : { keyring }) });
  const config = () => readFileSync(join(ctx.configDir, 'config.json'), 'utf8');
  return { emulator, ctx, env, config };
}

describe('client-credentials, then token', () => {
  it('with a keyring: nothing secret in the file, no notice, and token hands the sealed token out', async () => {
    const keyring = memoryKeyring();
    const { emulator, ctx, config } = await setUp(keyring);
    await runClientCredentials({ ...storing, json: true }, ctx);
    const issued = JSON.parse(ctx.stdout.text()).access_token as string;
    expect(config()).not.toContain(issued);
    expect(config()).not.toContain(emulator.client.clientSecret);
    expect(ctx.stderr.text()).not.toContain('plain text');
    const again = createTestContext({ nowMs: NOW, env: { MMAUTH_CONFIG_DIR: ctx.configDir }, keyring });
    await runToken(token, again);
    expect(again.stdout.text()).toBe(`${issued}\n`);
    expect(emulator.requests).toHaveLength(1);
  });

  it('a fresh token is read from its copy in the keyring, without the key; a stale one is renewed and copied anew', async () => {
    const keyring = memoryKeyring();
    const { emulator, ctx, config } = await setUp(keyring);
    await runClientCredentials({ ...storing, json: true }, ctx);
    const issued = JSON.parse(ctx.stdout.text()).access_token as string;
    const ref = JSON.parse(config()).profiles.default.token.access_token_ref as string;
    expect(JSON.parse(keyring.items.get(ref) ?? '{}')).toMatchObject({ v: 2, token: issued });
    const keys = [...keyring.items].filter(([account]) => !account.startsWith('access-token.'));
    for (const [account] of keys) keyring.items.delete(account);
    const fresh = createTestContext({ nowMs: NOW, env: { MMAUTH_CONFIG_DIR: ctx.configDir }, keyring });
    await runToken(token, fresh);
    expect(fresh.stdout.text()).toBe(`${issued}\n`);
    // Stale (30 s left): renewal needs the sealed secret, whose key is back.
    for (const [account, value] of keys) keyring.items.set(account, value);
    const later = createTestContext({
      nowMs: NOW + 7_170_000,
      env: { MMAUTH_CONFIG_DIR: ctx.configDir, MMAUTH_CLIENT_SECRET: '' },
      keyring,
    });
    await runToken(token, later);
    const renewed = later.stdout.text().trim();
    expect(renewed).not.toBe(issued);
    const newRef = JSON.parse(config()).profiles.default.token.access_token_ref as string;
    expect(newRef).not.toBe(ref);
    expect(JSON.parse(keyring.items.get(newRef) ?? '{}')).toMatchObject({ v: 2, token: renewed });
    expect(keyring.items.has(ref)).toBe(false);
    expect(emulator.requests).toHaveLength(2);
  });

  it('no keyring: the file, and the notice once, at the storing command only', async () => {
    const { ctx, config } = await setUp(undefined);
    await runClientCredentials(storing, ctx);
    const notices = ctx.stderr.text().match(/credentials in plain text/g) ?? [];
    expect(notices).toHaveLength(1);
    expect(ctx.stderr.text()).toContain(join(ctx.configDir, 'config.json'));
    expect(JSON.parse(config()).profiles.default).toMatchObject({
      credential_store: 'file',
      credential_store_fallback: true,
    });
    const later = createTestContext({ nowMs: NOW, env: { MMAUTH_CONFIG_DIR: ctx.configDir } });
    await runToken(token, later);
    expect(later.stderr.text()).toBe('');
  });

  it('MMAUTH_CREDENTIAL_STORE=keyring and no keyring: keyring_unavailable (exit 1) before any request', async () => {
    const { emulator, ctx } = await setUp(undefined, { MMAUTH_CREDENTIAL_STORE: 'keyring' });
    const error = await rejectedBy(() => runClientCredentials(storing, ctx));
    const report = describeFailure(error, { command: 'client-credentials', profileName: 'default', origin: undefined });
    expect(report).toMatchObject({ code: 'keyring_unavailable', exitCode: 1 });
    expect(report.hint).toContain('MMAUTH_CREDENTIAL_STORE=file');
    expect(emulator.requests).toEqual([]);
  });

  it('--insecure-storage: the file on purpose, no notice, even with a keyring', async () => {
    const keyring = memoryKeyring();
    const { emulator, ctx, config } = await setUp(keyring);
    await runClientCredentials({ ...storing, insecureStorage: true }, ctx);
    expect(config()).toContain(emulator.client.clientSecret);
    expect(ctx.stderr.text()).not.toContain('plain text');
    expect(keyring.items.size).toBe(0);
  });

  it('a key that is gone: credentials_lost, exit 4, the hint names client-credentials for this profile', async () => {
    const keyring = memoryKeyring();
    const { emulator, ctx } = await setUp(keyring, { MMAUTH_PROFILE: 'ci' });
    await runClientCredentials(storing, ctx);
    keyring.items.clear();
    const later = createTestContext({
      nowMs: NOW,
      env: { MMAUTH_CONFIG_DIR: ctx.configDir, MMAUTH_PROFILE: 'ci' },
      keyring,
    });
    const error = await rejectedBy(() => runToken(token, later));
    const report = describeFailure(error, { command: 'token', profileName: 'ci', origin: 'client_credentials' });
    expect(report).toMatchObject({ code: 'credentials_lost', exitCode: 4 });
    expect(report.hint).toContain('`mmauth client-credentials --profile ci`');
    expect(emulator.requests).toHaveLength(1);
  });
});
