/**
 * Credentials in the OS keyring, through the real `@napi-rs/keyring` addon over a real D-Bus
 * conversation (dbus-daemon) with a Secret Service (test/support/secret-service/provider.cjs):
 * nothing secret in any file mmauth writes, renewal through the keyring, logout clearing it, the
 * fallback said once, strict mode, a wiped keyring and the migration of plain-text profiles.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, runCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator, type TestEmulator } from '../support/emulator.js';
import { useSecretService } from '../support/secret-service.js';

const service = useSecretService();

/** A home of its own: config, data, cache and state dirs all under it (env-paths reads XDG_*). */
function makeHome(): { home: string; configDir: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), 'mmauth-home-'));
  onTestFinished(() => rmSync(home, REMOVE_TREE));
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
  };
  return { home, configDir: join(home, '.config/mmauth'), env };
}

/** What the keyring holds: keys (accounts of 32 hex digits) and access tokens' copies. */
function heldBy(items: Array<{ attributes: Record<string, string> }>): { keys: number; copies: number } {
  const accounts = items.map((item) => item.attributes.username ?? '');
  return {
    keys: accounts.filter((a) => /^[0-9a-f]{32}$/.test(a)).length,
    copies: accounts.filter((a) => a.startsWith('access-token.')).length,
  };
}

/** Every file under `dir`, with its bytes. */
function filesUnder(dir: string): Array<{ path: string; text: string }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, text: readFileSync(path).toString('latin1') }));
}

/** The forms a secret could take in a file: raw, base64, base64url, URL-encoded. */
function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('base64'), bytes.toString('base64url'), encodeURIComponent(secret)];
}

function expectNoSecretIn(home: string, secrets: readonly string[]): void {
  const files = filesUnder(home);
  expect(files.length).toBeGreaterThan(0);
  for (const { path, text } of files) {
    for (const secret of secrets) {
      for (const form of encodings(secret)) expect(text.includes(form), `${form} (of a secret) in ${path}`).toBe(false);
    }
  }
}

/** Records every access and refresh token the emulator issues. */
function recordIssuedTokens(emulator: TestEmulator): string[] {
  const issued: string[] = [];
  const refreshTokens = emulator.state.refreshTokens;
  const issue = refreshTokens.issue.bind(refreshTokens);
  refreshTokens.issue = (access, previous) => {
    const record = issue(access, previous);
    issued.push(record.token, record.accessToken);
    return record;
  };
  return issued;
}

interface StoredForm {
  profiles: Record<string, { token?: { expires_at?: string; obtained_at: string }; credential_store?: string }>;
}

/** Moves the stored token's expiry into the past (a field in the clear): it is now stale. */
function ageStoredToken(configDir: string, profile = 'default'): void {
  const config = readConfig(configDir) as StoredForm;
  const token = config.profiles[profile]?.token;
  if (token === undefined) throw new Error('no stored token');
  token.obtained_at = new Date(Date.now() - 3 * 3_600_000).toISOString();
  token.expires_at = new Date(Date.now() - 3_600_000).toISOString();
  writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
}

describe('with a Secret Service on the session bus', () => {
  it('login, client-credentials and a personal token: no secret in any file; token renews through the keyring; logout clears it', async () => {
    const emulator = await startTestEmulator();
    const issued = recordIssuedTokens(emulator);
    const { home, configDir, env: homeEnv } = makeHome();
    const env = {
      ...emulator.env(configDir),
      MMAUTH_CONFIG_DIR: undefined,
      ...homeEnv,
      DBUS_SESSION_BUS_ADDRESS: service.address,
      BROWSER: HEADLESS_BROWSER,
    };
    const login = await runCli(['login'], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).not.toMatch(/plain text/);
    const cc = await runCli(['client-credentials', '--profile', 'ci'], { env });
    expect(cc.code, cc.stderr).toBe(0);
    const pat = await runCli(['login', '--with-token', '--profile', 'pat'], {
      env: { ...env, MMAUTH_CLIENT_SECRET: undefined },
      input: emulator.personalAccessToken,
    });
    expect(pat.code, pat.stderr).toBe(0);

    const tokens = await Promise.all(
      ['default', 'ci', 'pat'].map(async (profile) =>
        (await runCli(['token', '--profile', profile], { env })).stdout.trim(),
      ),
    );
    expect(tokens[2]).toBe(emulator.personalAccessToken);
    const secrets = [emulator.client.clientSecret, emulator.personalAccessToken, ...tokens, ...issued];
    expect(issued.length).toBeGreaterThanOrEqual(2);
    expectNoSecretIn(home, secrets);
    const items = await service.items();
    // Keys and copies are told apart by their service attribute, never by a name the file gives.
    for (const item of items) {
      const isCopy = (item.attributes.username ?? '').startsWith('access-token.');
      expect(item.attributes.service).toBe(isCopy ? 'mmauth.access-token' : 'mmauth');
    }
    // One key for every profile, plus a copy of each access token (what `token` reads).
    expect(heldBy(items)).toEqual({ keys: 1, copies: 3 });
    for (const item of items) expect(readConfigText(configDir)).toContain(item.attributes.username);

    const status = await runCli(['status', '--json'], { env });
    const listed = (
      JSON.parse(status.stdout) as {
        profiles: Array<{ name: string; credential_store: string; has_refresh_token: boolean }>;
      }
    ).profiles;
    expect(listed.map((p) => [p.name, p.credential_store])).toEqual([
      ['ci', 'keyring'],
      ['default', 'keyring'],
      ['pat', 'keyring'],
    ]);
    expect(listed.find((p) => p.name === 'default')?.has_refresh_token).toBe(true);

    // Renewal: the refresh token comes out of the keyring, the new pair goes back sealed.
    ageStoredToken(configDir);
    const renewed = await runCli(['token'], { env });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(renewed.stdout.trim()).not.toBe(tokens[0]);
    expect(emulator.requests.some((r) => new URLSearchParams(r.body).get('grant_type') === 'refresh_token')).toBe(true);
    expectNoSecretIn(home, [...secrets, renewed.stdout.trim(), ...issued]);
    expect(heldBy(await service.items())).toEqual({ keys: 1, copies: 3 });

    for (const profile of ['default', 'ci', 'pat']) {
      const logout = await runCli(['logout', '--profile', profile], { env });
      expect(logout.code, logout.stderr).toBe(0);
    }
    // The key stays (another copy of the config directory may need it); it opens nothing here any more.
    expect(heldBy(await service.items())).toEqual({ keys: 1, copies: 0 });
    expectNoSecretIn(home, [...secrets, renewed.stdout.trim(), ...issued]);
  });

  it('a wiped keyring: exit 4 naming the command that gets them again, no stack trace, nothing sent, other profiles untouched', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv, DBUS_SESSION_BUS_ADDRESS: service.address };
    expect((await runCli(['client-credentials', '--profile', 'ci'], { env })).code).toBe(0);
    // A profile in the file, on purpose: it does not depend on the keyring.
    expect((await runCli(['client-credentials', '--profile', 'plain', '--insecure-storage'], { env })).code).toBe(0);
    await service.wipe();
    const before = readConfigText(configDir);
    const requests = emulator.requests.length;
    for (const args of [['token'], ['header'], ['info'], ['refresh'], ['api', '/api/me']]) {
      const result = await runCli([...args, '--profile', 'ci'], { env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(4);
      expect(result.stderr).toContain('the credentials of profile "ci" are stored, but unreadable');
      expect(result.stderr).toContain('mmauth client-credentials --profile ci');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    const json = await runCli(['token', '--profile', 'ci', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'credentials_lost', exit_code: 4 } });
    expect(emulator.requests.length).toBe(requests);
    expect(readConfigText(configDir)).toBe(before);
    expect((await runCli(['token', '--profile', 'plain'], { env })).code).toBe(0);
    // The way back works: the secret again, a new key.
    const again = await runCli(['client-credentials', '--profile', 'ci'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect((await runCli(['token', '--profile', 'ci'], { env })).code).toBe(0);
    expect(heldBy(await service.items())).toEqual({ keys: 1, copies: 1 });
  });

  it('a locked keyring or a refusing provider: exit 1 with the reason, never taken for a lost key, nothing written', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv, DBUS_SESSION_BUS_ADDRESS: service.address };
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const before = readConfigText(configDir);
    await service.lock(true);
    const locked = await runCli(['token'], { env });
    expect(locked.code, locked.stderr).toBe(1);
    expect(locked.stderr).toContain('no Secret Service (D-Bus) to use: it is locked');
    const relogin = await runCli(['client-credentials'], { env });
    expect(relogin.code, relogin.stderr).toBe(1);
    expect(readConfigText(configDir)).toBe(before);
    await service.lock(false);
    await service.fail('org.freedesktop.DBus.Error.AccessDenied');
    const refused = await runCli(['client-credentials', '--profile', 'other'], { env });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/failed while .*refused by the test provider/);
    expect(refused.stderr).not.toMatch(/plain text/);
    expect(readConfigText(configDir)).toBe(before);
  });
});

describe('a keyring with no default collection (it answers reads, refuses writes)', () => {
  it('the fallback line names the reason; doctor proves a write and warns instead of saying ok', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv, DBUS_SESSION_BUS_ADDRESS: service.address };
    await service.noDefault(true);
    const stored = await runCli(['client-credentials'], { env });
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toContain(
      `profile "default": credentials in plain text in ${join(configDir, 'config.json')} (0600): no Secret Service (D-Bus) to use: it has no default collection`,
    );
    const doctor = await runCli(['doctor', '--json'], { env });
    const keyring = (
      JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
    ).checks.find((check) => check.name === 'keyring');
    expect(keyring).toMatchObject({ status: 'warn', detail: expect.stringContaining('no default collection') });
    await service.noDefault(false);
    const healthy = await runCli(['doctor', '--json'], { env });
    const ok = (JSON.parse(healthy.stdout) as { checks: Array<{ name: string; status: string }> }).checks.find(
      (check) => check.name === 'keyring',
    );
    expect(ok?.status).toBe('ok');
    expect(heldBy(await service.items())).toEqual({ keys: 0, copies: 0 });
  });
});

describe('parallel renewal through the keyring', () => {
  it('12 parallel `mmauth token` on a stale keyring profile: one refresh request, one token, one copy left', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = {
      ...emulator.env(configDir),
      ...homeEnv,
      DBUS_SESSION_BUS_ADDRESS: service.address,
      BROWSER: HEADLESS_BROWSER,
    };
    expect((await runCli(['login'], { env })).code).toBe(0);
    ageStoredToken(configDir);
    const runs = await Promise.all(Array.from({ length: 12 }, () => runCli(['token'], { env, timeoutMs: 30_000 })));
    expect(runs.map((r) => r.code)).toEqual(Array(12).fill(0));
    expect(new Set(runs.map((r) => r.stdout)).size).toBe(1);
    const refreshes = emulator.requests.filter(
      (r) => r.url === '/oauth2/token' && new URLSearchParams(r.body).get('grant_type') === 'refresh_token',
    );
    expect(refreshes).toHaveLength(1);
    expect(heldBy(await service.items())).toEqual({ keys: 1, copies: 1 });
  }, 40_000);
});

describe('without a keyring', () => {
  it('auto: the file, with one notice at storing time naming the path, the reason and the silencer; token and renewal say nothing', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv, DBUS_SESSION_BUS_ADDRESS: undefined };
    const cc = await runCli(['client-credentials'], { env });
    expect(cc.code, cc.stderr).toBe(0);
    const notices = cc.stderr.split('\n').filter((line) => line.includes('plain text'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(join(configDir, 'config.json'));
    expect(notices[0]).toMatch(/no Secret Service \(D-Bus\) to use/);
    // 18: at most two short lines, the second naming the silencer.
    const at = cc.stderr.split('\n').findIndex((line) => line.includes('plain text'));
    expect(cc.stderr.split('\n')[at + 1]).toContain('MMAUTH_CREDENTIAL_STORE=file');
    ageStoredToken(configDir);
    for (const args of [['token'], ['header'], ['api', '/api/me'], ['refresh']]) {
      const result = await runCli(args, { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/plain text/);
    }
    const status = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as {
      profiles: Array<{ credential_store: string }>;
    };
    expect(status.profiles[0]?.credential_store).toBe('file');
    const silenced = await runCli(['client-credentials'], { env: { ...env, MMAUTH_CREDENTIAL_STORE: 'file' } });
    expect(silenced.code).toBe(0);
    expect(silenced.stderr).not.toMatch(/plain text/);
  });

  it('MMAUTH_CREDENTIAL_STORE=keyring: exit 1 with the reason and the fix, before any request, nothing stored', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = {
      ...emulator.env(configDir),
      ...homeEnv,
      MMAUTH_CREDENTIAL_STORE: 'keyring',
      BROWSER: HEADLESS_BROWSER,
    };
    for (const args of [['client-credentials'], ['login'], ['login', '--start']]) {
      const result = await runCli(args, { env });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/no Secret Service \(D-Bus\) to use/);
      expect(result.stderr).toContain('MMAUTH_CREDENTIAL_STORE=file');
    }
    const withToken = await runCli(['login', '--with-token'], { env, input: emulator.personalAccessToken });
    expect(withToken.code).toBe(1);
    expect(emulator.requests).toEqual([]);
    expect(readConfigText(configDir)).toBeUndefined();
    const json = await runCli(['client-credentials', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'keyring_unavailable', exit_code: 1 } });
  });

  it('--insecure-storage: the file, on purpose and without a notice; the profile stays in the file when a keyring appears', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv };
    const cc = await runCli(['client-credentials', '--insecure-storage'], { env });
    expect(cc.code, cc.stderr).toBe(0);
    expect(cc.stderr).not.toMatch(/plain text/);
    expect(readConfigText(configDir)).toContain(emulator.client.clientSecret);
    const withBus = { ...env, DBUS_SESSION_BUS_ADDRESS: service.address };
    ageStoredToken(configDir);
    expect((await runCli(['token'], { env: withBus })).code).toBe(0);
    expect((readConfig(configDir) as StoredForm).profiles.default?.credential_store).toBe('file');
    expect(await service.items()).toEqual([]);
  });

  it('a bad MMAUTH_CREDENTIAL_STORE is a usage error (exit 2)', async () => {
    const { env: homeEnv } = makeHome();
    const result = await runCli(['status'], { env: { ...homeEnv, MMAUTH_CREDENTIAL_STORE: 'vault' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('MMAUTH_CREDENTIAL_STORE must be auto, keyring or file');
  });
});

/** Turns a profile into what an mmauth before the keyring wrote: plain text, no record of where. */
function makeLegacy(configDir: string, profile = 'default'): void {
  const config = readConfig(configDir) as { profiles: Record<string, Record<string, unknown>> };
  const stored = config.profiles[profile];
  if (stored === undefined) throw new Error('no profile');
  delete stored.credential_store;
  delete stored.credential_store_fallback;
  writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
}

const credentialStoreOf = async (env: Record<string, string | undefined>, profile = 'default') =>
  (
    JSON.parse((await runCli(['status', '--json', '--profile', profile], { env })).stdout) as {
      profiles: Array<{ name: string; credential_store: string }>;
    }
  ).profiles.find((p) => p.name === profile)?.credential_store;

describe('migration of plain-text profiles', () => {
  it('a profile of an earlier version, and one that fell back, keep working and move into the keyring at their next write', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const { home, configDir, env: homeEnv } = makeHome();
    const noBus = { ...emulator.env(configDir), ...homeEnv, BROWSER: HEADLESS_BROWSER };
    expect((await runCli(['login'], { env: noBus })).code).toBe(0);
    expect((await runCli(['client-credentials', '--profile', 'ci'], { env: noBus })).code).toBe(0);
    makeLegacy(configDir);
    const plain = readConfigText(configDir) ?? '';
    const oldAccess = (await runCli(['token'], { env: noBus })).stdout.trim();
    expect(plain).toContain(oldAccess);

    const withBus = { ...noBus, DBUS_SESSION_BUS_ADDRESS: service.address };
    // Reading moves nothing: a fresh token is handed out, the file stays as it was.
    expect((await runCli(['token'], { env: withBus })).stdout.trim()).toBe(oldAccess);
    expect(readConfigText(configDir)).toBe(plain);
    expect(await credentialStoreOf(withBus)).toBe('file');

    // The next write (a renewal) moves it; the fallen-back profile moves at its own.
    const refreshed = await runCli(['refresh', '--json'], { env: withBus });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    ageStoredToken(configDir, 'ci');
    const ci = await runCli(['token', '--profile', 'ci'], { env: withBus });
    expect(ci.code, ci.stderr).toBe(0);
    expect(await credentialStoreOf(withBus)).toBe('keyring');
    expect(await credentialStoreOf(withBus, 'ci')).toBe('keyring');
    expectNoSecretIn(home, [oldAccess, emulator.client.clientSecret, ci.stdout.trim()]);
    expect(readConfigText(configDir)).not.toMatch(/"refresh_token": *"/);
    const token = await runCli(['token'], { env: withBus });
    expect(token.stdout.trim()).toBe(JSON.parse(refreshed.stdout).access_token);
    expect(heldBy(await service.items())).toEqual({ keys: 1, copies: 2 });
  });

  it('kill -9 at random points of the move never loses the profile: it stays readable, and the next write completes the move', async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const { configDir, env: homeEnv } = makeHome();
    const noBus = { ...emulator.env(configDir), ...homeEnv, BROWSER: HEADLESS_BROWSER };
    expect((await runCli(['login'], { env: noBus })).code).toBe(0);
    makeLegacy(configDir);
    const withBus = { ...noBus, DBUS_SESSION_BUS_ADDRESS: service.address };
    const { startCli } = await import('../support/cli.js');
    for (let round = 0; round < 10; round++) {
      const running = startCli(['refresh'], { env: withBus, timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 20 + ((round * 37) % 140)));
      running.child.kill('SIGKILL');
      await running.done;
      rmSync(join(configDir, 'config.json.lock'), { recursive: true, force: true });
      rmSync(join(configDir, 'config.json.lock.pid'), { force: true });
      // Whole, and readable in whichever form it is: the plain one, or the sealed one complete.
      const status = await runCli(['status', '--json'], { env: withBus });
      expect(status.code === 0 || status.code === 4, status.stderr).toBe(true);
      const token = await runCli(['token', '--no-renew'], { env: withBus });
      expect([0, 4]).toContain(token.code);
      expect(token.stderr).not.toContain('stored, but unreadable');
    }
    const after = await runCli(['refresh', '--json'], { env: withBus });
    expect(after.code, after.stderr).toBe(0);
    expect(await credentialStoreOf(withBus)).toBe('keyring');
    expect((await runCli(['token'], { env: withBus })).stdout.trim()).toBe(JSON.parse(after.stdout).access_token);
  }, 60_000);
});

describe('mmauth doctor checks the keyring', () => {
  it('answers and opens the profile; no keyring: a warning under auto; a wiped key: a failure naming the way back', async () => {
    const emulator = await startTestEmulator();
    const { configDir, env: homeEnv } = makeHome();
    const env = { ...emulator.env(configDir), ...homeEnv, DBUS_SESSION_BUS_ADDRESS: service.address };
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const keyringOf = async (extra: Record<string, string | undefined>) => {
      const result = await runCli(['doctor', '--json'], { env: { ...env, ...extra } });
      const doc = JSON.parse(result.stdout) as { checks: Array<{ name: string; status: string; detail: string }> };
      return { code: result.code, check: doc.checks.find((c) => c.name === 'keyring') };
    };
    const good = await keyringOf({});
    expect(good.check).toMatchObject({ status: 'ok' });
    expect(good.check?.detail).toMatch(/Secret Service \(D-Bus\) answers .*sealed, and its key opens them/);

    const fileProfile = { MMAUTH_PROFILE: 'plain', DBUS_SESSION_BUS_ADDRESS: undefined };
    // A profile named by MMAUTH_PROFILE must exist: one with settings only, no credentials.
    const created = await runCli(['profile', 'create', 'plain', '--base-url', emulator.baseUrl], {
      env: { ...env, ...fileProfile },
    });
    expect(created.code, created.stderr).toBe(0);
    const none = await keyringOf(fileProfile);
    expect(none.check).toMatchObject({ status: 'warn' });
    expect(none.check?.detail).toMatch(/no Secret Service \(D-Bus\) to use/);
    const unreachable = await keyringOf({ DBUS_SESSION_BUS_ADDRESS: undefined });
    expect(unreachable).toMatchObject({ code: 1, check: { status: 'fail' } });

    await service.wipe();
    const wiped = await keyringOf({});
    expect(wiped).toMatchObject({ code: 1, check: { status: 'fail' } });
    expect(wiped.check?.detail).toContain('stored, but unreadable');
  });
});

describe('two-step login with a keyring', () => {
  it("the pending login's PKCE verifier is sealed too, and --complete opens it", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { home, configDir, env: homeEnv } = makeHome();
    const env = {
      ...emulator.env(configDir),
      MMAUTH_CLIENT_SECRET: undefined,
      MMAUTH_CLIENT_ID: emulator.publicClient.clientId,
      ...homeEnv,
      DBUS_SESSION_BUS_ADDRESS: service.address,
    };
    const start = await runCli(['login', '--start', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const pending = (readConfig(configDir) as { profiles: { default: { pending_login: Record<string, unknown> } } })
      .profiles.default.pending_login;
    expect(pending.code_verifier).toBeUndefined();
    expect(pending.state).toBeDefined();
    const url = JSON.parse(start.stdout).authorization_url as string;
    const redirect = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const complete = await runCli(['login', '--complete', redirect], { env });
    expect(complete.code, complete.stderr).toBe(0);
    const verifier =
      new URLSearchParams(emulator.requests.find((r) => r.url === '/oauth2/token')?.body).get('code_verifier') ?? '';
    expect(verifier).toMatch(/^[\w-]{43,}$/);
    const token = (await runCli(['token'], { env })).stdout.trim();
    expectNoSecretIn(home, [verifier, token]);
  });
});
