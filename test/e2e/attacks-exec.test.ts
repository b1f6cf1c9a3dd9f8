/**
 * What an attacker (or bad luck) does around `exec` and renewal (issue 31: N8, N10, N11, N17, W15).
 * Each case is the attack tried again with the spawned binary against the emulator.
 */
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';

import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli, startCli } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { startGateProxy } from '../support/gate-proxy.js';
import { writeProfiles } from '../support/profiles.js';

/** A scratch directory of this test's. */
const scratch = () => makeScratchDir('mmauth-attack-exec-');

const CHILD = resolve(import.meta.dirname, '../support/exec-child.mjs');

describe('exec', () => {
  it('N8: a TMPDIR others can write, without the sticky bit, is refused: no token goes there, the child is not started', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const shared = join(scratch(), 'shared-tmp');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const marker = join(scratch(), 'started');
    const result = await runCli(['exec', '--', 'touch', marker], { env: { ...env, TMPDIR: shared } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the temporary directory ${shared} can be written by others and has no sticky bit`);
    expect(() => readFileSync(marker)).toThrow();
  });

  it('N10: a renewal that keeps failing is tried at most every 250 ms and said at most once per 30 s (no busy loop)', async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 4 });
    const gate = await startGateProxy(emulator.baseUrl);
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file', MMAUTH_BASE_URL: gate.baseUrl });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    gate.set('POST /oauth2/token', 'cut');
    const before = gate.seen.length;
    // Stale after 2 s, expired after 4 s: the child outlives the token by a second.
    const result = await runCli(['exec', '--', process.execPath, '-e', 'setTimeout(() => {}, 5000)'], {
      env,
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(0);
    const tries = gate.seen.slice(before).filter((line) => line.startsWith('POST /oauth2/token')).length;
    expect(tries).toBeGreaterThanOrEqual(1);
    expect(tries).toBeLessThanOrEqual(6);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('! '));
    expect(warnings.length).toBeLessThanOrEqual(3);
  });

  it("N11: a profile renamed, and a new one of its name made at another server, while exec runs: the child never gets that server's token; exec says it stops renewing", async () => {
    const first = await startTestEmulator({ tokenTtlS: 4 });
    const other = await startTestEmulator();
    const configDir = makeConfigDir();
    const file = { MMAUTH_CREDENTIAL_STORE: 'file' };
    expect((await runCli(['client-credentials', '--profile', 'work'], { env: first.env(configDir, file) })).code).toBe(
      0,
    );
    const report = join(scratch(), 'report.json');
    const exec = startCli(['exec', '--profile', 'work', '--', process.execPath, CHILD], {
      env: {
        ...first.env(configDir, file),
        DURATION_MS: '3500',
        INTERVAL_MS: '100',
        API_URL: `${first.baseUrl}/api/me`,
        REPORT_FILE: report,
      },
      timeoutMs: 20_000,
    });
    await sleep(800);
    const bare = { MMAUTH_CONFIG_DIR: configDir };
    expect((await runCli(['profile', 'rename', 'work', 'old'], { env: bare })).code).toBe(0);
    const otherEnv = { ...other.env(configDir, file), MMAUTH_PROFILE: 'work' };
    expect((await runCli(['client-credentials'], { env: otherEnv })).code).toBe(0);
    const otherToken = (readConfig(configDir) as any).profiles.work.token.access_token as string;
    const result = await exec.done;
    const seen = (JSON.parse(readFileSync(report, 'utf8')) as { seen: string[] }).seen;
    expect(seen).not.toContain(otherToken);
    expect(result.stderr).toContain('exec stops renewing');
  }, 30_000);
});

describe('renewal and the store', () => {
  it("N17: a profile removed between a renewal's two writes is not brought back empty", async () => {
    const emulator = await startTestEmulator({ flavor: 'doorkeeper5' });
    const gate = await startGateProxy(emulator.baseUrl);
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, {
      BROWSER: HEADLESS_BROWSER,
      MMAUTH_CREDENTIAL_STORE: 'file',
      MMAUTH_BASE_URL: gate.baseUrl,
    });
    expect((await runCli(['login'], { env })).code).toBe(0);
    // The chain's presentation (token info) answers late: the renewal's second write comes after it.
    gate.set('GET /oauth2/token/info', { delayMs: 1_500 });
    const refresh = startCli(['refresh'], { env, timeoutMs: 20_000 });
    await gate.waitFor('GET /oauth2/token/info');
    const removed = await runCli(['profile', 'remove', 'default', '--local-only'], {
      env: { MMAUTH_CONFIG_DIR: configDir },
    });
    expect(removed.code, removed.stderr).toBe(0);
    expect((await refresh.done).code).toBe(0);
    expect((readConfig(configDir) as { profiles: Record<string, unknown> }).profiles).toEqual({});
  });
});

describe('W15: malformed input is a usage or store error, never "unexpected"', () => {
  it('a stored base URL that is not a URL: store_malformed naming profiles.<name>.base_url (exit 1)', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { default: { base_url: 'not a url' } });
    const result = await runCli(['doctor', '--json'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('unexpected');
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: 'store_malformed',
      message: expect.stringContaining('profiles.default.base_url is not a URL'),
    });
  });

  it('api -X CONNECT is a usage error (exit 2), before any connection', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const before = emulator.requests.length;
    const result = await runCli(['api', '-X', 'CONNECT', '/api/me'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('-X CONNECT opens a tunnel');
    expect(emulator.requests.length).toBe(before);
  });
});
