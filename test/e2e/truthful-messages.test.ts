/**
 * What a new user was told that was not true, or had to guess (issue 30, "Messages that say what is
 * true"): each case tried again with the spawned binary against the emulator, the words pinned by an
 * inline snapshot (ports, paths and tokens replaced by placeholders).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, makeScratchDir, runCli } from '../support/cli.js';
import { startTestEmulator, storedAccessToken, type TestEmulator } from '../support/emulator.js';
import { writeProfiles } from '../support/profiles.js';

/** A scratch directory of this test's. */
const scratch = () => makeScratchDir('mmauth-words-');

/** stderr with the emulator's address, the config directory and `extra` values replaced by placeholders. */
function words(
  text: string,
  emulator: TestEmulator | undefined,
  configDir: string,
  extra: Record<string, string> = {},
) {
  let out = text;
  if (emulator !== undefined) out = out.replaceAll(emulator.baseUrl, '<base>');
  out = out.replaceAll(configDir, '<config>');
  for (const [name, value] of Object.entries(extra)) out = out.replaceAll(value, `<${name}>`);
  return out.trim();
}

/** The address an auto-approving emulator's browser would end on for `authorizationUrl`. */
async function redirectFor(authorizationUrl: string): Promise<string> {
  const answer = await fetch(authorizationUrl, { redirect: 'manual' });
  return answer.headers.get('location') ?? '';
}

describe('logout says what it did', () => {
  it('after revoke: "nothing to revoke; forgot the client secret", never the lost-key warning', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    expect((await runCli(['revoke'], { env })).code).toBe(0);
    const logout = await runCli(['logout'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(logout.code, logout.stderr).toBe(0);
    expect(words(logout.stderr, emulator, configDir)).toMatchInlineSnapshot(
      `"Profile "default" has no stored token: nothing to revoke; forgot the client secret."`,
    );
  });

  it('logout --all never says "nothing to log out" and "Logged out" for the same profile', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    writeProfiles(configDir, { empty: { base_url: emulator.baseUrl } });
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials', '--profile', 'cc'], { env })).code).toBe(0);
    const all = await runCli(['logout', '--all'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(all.code, all.stderr).toBe(0);
    expect(words(all.stderr, emulator, configDir).replace(/\S{4}…\S{4}/g, '<masked>')).toMatchInlineSnapshot(`
      "✓ Revoked <masked> on <base> (confirmed: token info now refuses it)
      ✓ Logged out of profile "cc".
      Profile "empty" has no stored token: nothing to log out."
    `);
  });
});

describe('two-step login', () => {
  async function started(args: string[], env: Record<string, string | undefined>) {
    const start = await runCli(['login', '--start', '--json', '--scope', 'service', ...args], { env });
    expect(start.code, start.stderr).toBe(0);
    return (JSON.parse(start.stdout) as { authorization_url: string }).authorization_url;
  }

  it('the secret given to --start is carried (sealed like the verifier) to --complete, which says whose account it signed in to', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const secretFile = join(scratch(), 'secret');
    writeFileSync(secretFile, `${emulator.client.clientSecret}\n`, { mode: 0o600 });
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: emulator.baseUrl, MMAUTH_CLIENT_ID: 'mmauth-demo' };
    const url = await started(['--client-secret-file', secretFile], env);
    const complete = await runCli(['login', '--complete', await redirectFor(url)], {
      env: { MMAUTH_CONFIG_DIR: configDir },
    });
    expect(complete.code, complete.stderr).toBe(0);
    const exchange = emulator.requests.find((r) => r.url === '/oauth2/token');
    expect(new URLSearchParams(exchange?.body).get('client_secret')).toBe(emulator.client.clientSecret);
    expect(complete.stderr).toContain(
      'Signed in as resource owner 42: if that is not your account, run `mmauth logout`.',
    );
  });

  it('--complete without the secret of a confidential client, no terminal: the error says it needs it there', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: emulator.baseUrl, MMAUTH_CLIENT_ID: 'mmauth-demo' };
    const url = await started(['--no-probe'], env);
    const complete = await runCli(['login', '--complete', await redirectFor(url)], {
      env: { MMAUTH_CONFIG_DIR: configDir },
    });
    expect(complete.code).toBe(2);
    expect(words(complete.stderr, emulator, configDir)).toMatchInlineSnapshot(`
      "error: mmauth-demo is a confidential client: the code exchange needs its secret at --complete
        give it to --complete: MMAUTH_CLIENT_SECRET, --client-secret-file or --client-secret-stdin"
    `);
  });

  it('a stored secret never goes with another client id given to --start (N20)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const bare = { MMAUTH_CONFIG_DIR: configDir };
    const url = await started(['--client-id', 'mmauth-public', '--replace'], bare);
    const complete = await runCli(['login', '--complete', await redirectFor(url), '--replace'], { env: bare });
    expect(complete.code, complete.stderr).toBe(0);
    const exchange = emulator.requests.filter((r) => r.url === '/oauth2/token').at(-1);
    expect(exchange?.body).not.toContain(emulator.client.clientSecret);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).not.toContain(emulator.client.clientSecret);
  });

  it('--complete given the authorization URL instead of the address the browser ended on says so', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir);
    const url = await started([], env);
    const complete = await runCli(['login', '--complete', url], { env });
    expect(complete.code).toBe(2);
    expect(words(complete.stderr, emulator, configDir).replace(/:\d+\/callback/, ':<port>/callback'))
      .toMatchInlineSnapshot(`
      "error: that is the authorization URL --start printed, not the address the browser ended on after you allowed access
        open it in a browser, allow access, then give --complete the address it ends on (http://127.0.0.1:<port>/callback…)"
    `);
  });
});

describe('status, profiles, refresh, exec', () => {
  it('status on an expired token that renews on next use: exit 0, names mmauth refresh, not login', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const path = join(configDir, 'config.json');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.profiles.default.token.expires_at = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    const status = await runCli(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr.trim().split('\n').at(-1)).toMatchInlineSnapshot(
      `"The token of "default" has expired; it renews on next use (\`mmauth refresh\` renews it now)."`,
    );
  });

  it('profile use of an unknown name reads as a typo (exit 4); Current: never names a missing profile', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { work: { base_url: 'https://maps.example.com' } });
    const use = await runCli(['profile', 'use', 'wrok'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(use.code).toBe(4);
    expect(use.stderr.trim()).toMatchInlineSnapshot(`
      "error: there is no profile "wrok": the profiles are "work"
        check the name (mmauth profile list), or make it: mmauth profile create wrok --base-url URL"
    `);
    const list = await runCli(['profile', 'list'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(list.stderr.trim().split('\n').at(-1)).toMatchInlineSnapshot(
      `"Current: none (no profile "default", the default profile): \`mmauth profile use NAME\`"`,
    );
  });

  it('profile list after profile use: "Current: work (the current profile, mmauth profile use)", one pair of parentheses', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { work: { base_url: 'https://maps.example.com' } });
    expect((await runCli(['profile', 'use', 'work'], { env: { MMAUTH_CONFIG_DIR: configDir } })).code).toBe(0);
    const list = await runCli(['profile', 'list'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(list.stderr.trim().split('\n').at(-1)).toBe('Current: work (the current profile, mmauth profile use)');
  });

  it('profile list columns align whatever the lengths of client ids', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      a: { base_url: 'https://maps.example.com', client_id: 'x' },
      'a-much-longer-name': { base_url: 'https://m.example.com', client_id: 'a-very-long-client-id-0123456789' },
    });
    const list = await runCli(['profile', 'list'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    const rows = list.stderr.split('\n').filter((line) => line.includes('credentials:'));
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((row) => row.indexOf('no token'))).size).toBe(1);
    expect(new Set(rows.map((row) => row.indexOf('https://'))).size).toBe(1);
  });

  it('refresh with no stored token says so (exit 4)', async () => {
    const configDir = makeConfigDir();
    writeProfiles(configDir, { default: { base_url: 'https://maps.example.com', client_id: 'x' } });
    const refresh = await runCli(['refresh'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(refresh.code).toBe(4);
    expect(refresh.stderr.split('\n')[0]).toMatchInlineSnapshot(
      `"error: profile "default" has no stored token: nothing to refresh"`,
    );
  });

  it.each([
    ['a command that cannot be found', 127, ['no-such-command-mmauth']],
    ['a command that cannot be run', 126, ['<not executable>']],
  ] as const)('exec of %s exits %i, as env and shells do', async (_what, code, given) => {
    const notExecutable = join(scratch(), 'script');
    writeFileSync(notExecutable, 'echo hi\n', { mode: 0o644 });
    const command = given.map((part) => (part === '<not executable>' ? notExecutable : part));
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const result = await runCli(['exec', '--', ...command], { env });
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(`cannot run ${command[0]}`);
  });
});

describe('smaller truths', () => {
  it('a masked token keeps its case', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const token = storedAccessToken(configDir);
    emulator.state.revokeToken(token);
    const revoke = await runCli(['revoke'], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toContain(`The token ${token.slice(0, 4)}…${token.slice(-4)} was already expired or revoked`);
  });

  it('doctor without a keyring prints no D-Bus autolaunch noise, and a failed check is no "error: fail"', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    expect((await runCli(['client-credentials'], { env: emulator.env(configDir) })).code).toBe(0);
    await emulator.close();
    const doctor = await runCli(['doctor'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(doctor.code).toBe(1);
    expect(doctor.stderr).not.toMatch(/autolaunch|DBus error|error: fail/);
    expect(doctor.stderr).toMatch(/^✗ fail {2}reachable: .*connection refused/m);
  });

  it('the --profile help names the whole selection order', async () => {
    const help = await runCli(['token', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'profile to use; else MMAUTH_PROFILE, the nearest .mmauth-profile, `mmauth profile use`, then "default"',
    );
  });

  it('a client secret file others can read: a warning naming its mode, as ssh does for keys', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const secretFile = join(scratch(), 'secret');
    writeFileSync(secretFile, `${emulator.client.clientSecret}\n`);
    chmodSync(secretFile, 0o644);
    const env = { MMAUTH_CONFIG_DIR: configDir, MMAUTH_BASE_URL: emulator.baseUrl, MMAUTH_CLIENT_ID: 'mmauth-demo' };
    const result = await runCli(['client-credentials', '--no-save', '--client-secret-file', secretFile], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(words(result.stderr.split('\n')[0] ?? '', emulator, configDir, { file: secretFile })).toMatchInlineSnapshot(
      `"! the client secret file <file> is readable by others (mode 0644): \`chmod 600 <file>\`"`,
    );
  });

  it('login reports an insecure base URL before it asks for a browser', async () => {
    const marker = join(scratch(), 'browser-ran');
    const result = await runCli(['login', '--base-url', 'http://maps.example.com', '--client-id', 'x'], {
      env: { MMAUTH_CONFIG_DIR: makeConfigDir(), BROWSER: `touch ${marker}` },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('refusing plain http to maps.example.com');
    expect(() => readFileSync(marker)).toThrow();
  });

  it("api accepts --base-url: the profile's own origin works; another origin is refused before any connection", async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
    expect((await runCli(['client-credentials'], { env })).code).toBe(0);
    const bare = { MMAUTH_CONFIG_DIR: configDir };
    const own = await runCli(['api', '--base-url', emulator.baseUrl, '/api/me'], { env: bare });
    expect(own.code, own.stderr).toBe(0);
    const other = await runCli(['api', '--base-url', 'http://127.0.0.1:9', '/api/me'], { env: bare });
    expect(other.code).toBe(2);
    expect(words(other.stderr.split('\n')[0] ?? '', emulator, configDir)).toMatchInlineSnapshot(
      `"error: profile "default" holds credentials for <base>; refusing to send them to http://127.0.0.1:9"`,
    );
  });

  it('a BROWSER that keeps no cookies: the redirect arrived and was refused for want of the login cookie', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const result = await runCli(['login', '--wait', '3', '--scope', 'service'], {
      env: emulator.env(configDir, { BROWSER: 'curl -s -o /dev/null -L' }),
    });
    expect(result.code).toBe(3);
    const lines = words(result.stderr, emulator, configDir)
      .split('\n')
      .filter((line) => line.startsWith('error:') || line.startsWith('  use a browser'));
    expect(lines.join('\n').replace(/:\d+\/callback/, ':<port>/callback')).toMatchInlineSnapshot(`
      "error: a redirect arrived at http://127.0.0.1:<port>/callback but was refused: it did not carry the login's cookie, set when the browser opened the start address (a BROWSER command that keeps no cookies)
        use a browser, or a BROWSER command that keeps cookies (curl: -c /dev/null turns its cookie engine on); or mmauth login --no-browser and open the URL yourself"
    `);
  });
});
