/**
 * The permanent attack suite, the store and the keyring (issue 22, cases 11–15 and 17): an attacker
 * who can write the config file, or a copy of it (a synced dotfile directory, a restored backup, a
 * sandboxed tool that writes files but cannot reach the keyring). Real addon, private dbus-daemon
 * and the suite's own Secret Service; a capture server proves what was not sent.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { startListeningFixture } from '../support/listening-fixture.js';
import { useSecretService } from '../support/secret-service.js';

const service = useSecretService();

type Json = Record<string, any>;
const configOf = (configDir: string): Json => JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')) as Json;
const writeConfig = (configDir: string, config: Json) =>
  writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });

/** Two keyring profiles on the emulator: `work` (code flow, refresh token) and `ci` (client credentials). */
async function keyringProfiles() {
  const emulator = await startTestEmulator();
  const configDir = makeConfigDir();
  const env = {
    ...emulator.env(configDir),
    MMAUTH_BASE_URL: undefined,
    DBUS_SESSION_BUS_ADDRESS: service.address,
    BROWSER: HEADLESS_BROWSER,
  };
  const base = ['--base-url', emulator.baseUrl];
  expect((await runCli(['login', '--profile', 'work', ...base], { env })).code).toBe(0);
  expect((await runCli(['client-credentials', '--profile', 'ci', ...base], { env })).code).toBe(0);
  const bare = { ...env, MMAUTH_CLIENT_ID: undefined, MMAUTH_CLIENT_SECRET: undefined };
  expect(configOf(configDir).profiles.work.credential_store).toBe('keyring');
  return { emulator, configDir, env: bare };
}

/** Makes a profile's stored token stale by the local clock (its expiry is in the clear). */
function age(configDir: string, profile: string): void {
  const config = configOf(configDir);
  config.profiles[profile].token.obtained_at = new Date(Date.now() - 3 * 3_600_000).toISOString();
  config.profiles[profile].token.expires_at = new Date(Date.now() - 3_600_000).toISOString();
  writeConfig(configDir, config);
}

describe('attacks with write access to the config file', () => {
  it.each(['base_url', 'client_id'])(
    '11: sealed credentials are bound to %s too: edited in the file, they do not open (credentials_lost, exit 4), nothing sent',
    async (field) => {
      const { emulator, configDir, env } = await keyringProfiles();
      const fixture = await startListeningFixture();
      const config = configOf(configDir);
      config.profiles.work[field] = field === 'base_url' ? fixture.baseUrl : 'attacker-client';
      writeConfig(configDir, config);
      age(configDir, 'work');
      const before = emulator.requests.length;
      const result = await runCli(['token', '--profile', 'work'], { env });
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('credentials');
      expect(fixture.connections()).toBe(0);
      expect(emulator.requests.length).toBe(before);
    },
  );

  it.each(['token_endpoint', 'revocation_endpoint', 'introspection_endpoint'])(
    'M8: a planted metadata copy whose %s is on another origin (fresh fetched_at) sends no sealed credential there: store_malformed, nothing sent',
    async (endpoint) => {
      const { emulator, configDir, env } = await keyringProfiles();
      const fixture = await startListeningFixture();
      const config = configOf(configDir);
      config.profiles.work.server_metadata = {
        fetched_at: new Date().toISOString(),
        base_url: emulator.baseUrl.replace(/\/+$/, ''),
        document: {
          issuer: emulator.baseUrl,
          [endpoint]: `${fixture.baseUrl}/steal`,
          source: 'oauth-authorization-server',
        },
      };
      writeConfig(configDir, config);
      age(configDir, 'work');
      for (const args of [['token'], ['logout'], ['revoke']]) {
        const result = await runCli([...args, '--profile', 'work'], { env });
        expect(result.code, `${args[0]}: ${result.stderr}`).not.toBe(0);
        expect(result.stderr).toContain('stored server metadata names an endpoint off');
      }
      expect(fixture.connections()).toBe(0);
    },
  );

  it("12: a planted access_token_ref naming another profile's copy never hands out that token", async () => {
    const { configDir, env } = await keyringProfiles();
    const config = configOf(configDir);
    const ciToken = (await runCli(['token', '--profile', 'ci'], { env })).stdout.trim();
    config.profiles.work.token.access_token_ref = config.profiles.ci.token.access_token_ref;
    writeConfig(configDir, config);
    const result = await runCli(['token', '--profile', 'work'], { env });
    expect(result.stdout.trim()).not.toBe(ciToken);
    expect(`${result.stdout}${result.stderr}`).not.toContain(ciToken);
  });

  it('13: a planted key_id naming a token copy is no key: nothing is sealed with an access token as its key', async () => {
    const { configDir, env } = await keyringProfiles();
    const config = configOf(configDir);
    const copyAccount = config.profiles.ci.token.access_token_ref as string;
    config.profiles.work.sealed.key_id = copyAccount;
    writeConfig(configDir, config);
    // Opening the sealed credentials (a renewal) finds no key there: lost, never the copy used as a key.
    const read = await runCli(['refresh', '--profile', 'work'], { env });
    expect(read.code).toBe(4);
    expect(read.stderr).toContain('stored, but unreadable');
    // A storing command then seals with a key mmauth made, never under the copy's account.
    const again = await runCli(['client-credentials', '--profile', 'ci', '--replace'], {
      env: { ...env, MMAUTH_CLIENT_ID: 'mmauth-demo' },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(configOf(configDir).profiles.ci.sealed.key_id).toMatch(/^[0-9a-f]{32}$/);
    expect(configOf(configDir).profiles.ci.sealed.key_id).not.toBe(copyAccount);
  });

  it('14: logout --local-only in a copy of the config directory never breaks the original', async () => {
    const { configDir, env } = await keyringProfiles();
    const copy = join(makeScratchDir('mmauth-copy-'), 'config');
    onTestFinished(() => rmSync(copy, REMOVE_TREE));
    cpSync(configDir, copy, { recursive: true });
    for (const profile of ['work', 'ci']) {
      const logout = await runCli(['logout', '--local-only', '--profile', profile], {
        env: { ...env, MMAUTH_CONFIG_DIR: copy },
      });
      expect(logout.code, logout.stderr).toBe(0);
    }
    age(configDir, 'work');
    const renewed = await runCli(['token', '--profile', 'work'], { env });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect((await runCli(['token', '--profile', 'ci'], { env })).code).toBe(0);
  });

  it('15: a renewal never moves credentials out of the keyring, whatever MMAUTH_CREDENTIAL_STORE says', async () => {
    const { emulator, configDir, env } = await keyringProfiles();
    age(configDir, 'work');
    const result = await runCli(['token', '--profile', 'work'], { env: { ...env, MMAUTH_CREDENTIAL_STORE: 'file' } });
    expect(result.code, result.stderr).toBe(0);
    const text = readFileSync(join(configDir, 'config.json'), 'utf8');
    expect(configOf(configDir).profiles.work.credential_store).toBe('keyring');
    expect(text).not.toContain(emulator.client.clientSecret);
    expect(text).not.toContain(result.stdout.trim());
  });

  it('15: a storing command with an explicit choice moves them, and says so', async () => {
    const { configDir, env } = await keyringProfiles();
    const result = await runCli(['client-credentials', '--profile', 'ci', '--insecure-storage'], {
      env: { ...env, MMAUTH_CLIENT_ID: 'mmauth-demo' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('moved out of the keyring');
    expect(configOf(configDir).profiles.ci.credential_store).toBe('file');
  });

  it('17: a pending login whose sealed verifier is lost says credentials_lost with the way back, not "no login waiting"', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = { ...emulator.env(configDir), DBUS_SESSION_BUS_ADDRESS: service.address };
    const start = await runCli(['login', '--start', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const url = (JSON.parse(start.stdout) as { authorization_url: string }).authorization_url;
    const redirect = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    await service.wipe();
    const result = await runCli(['login', '--complete', redirect], { env });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('stored, but unreadable');
    expect(result.stderr).not.toContain('no login waiting');
  });
});
