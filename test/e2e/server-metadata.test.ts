/**
 * Server metadata and the issuer check (issue 34 item 1): RFC 8414 metadata read, stored and shown
 * by doctor; RFC 9207 §2.4's `iss` required of a server whose metadata promises it. The emulator in
 * its `doorkeeper6` flavor behind a gate proxy that strips or changes `iss` in the
 * authorization response; the `doorkeeper5` flavor (no metadata) as before.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';
import { startGateProxy } from '../support/gate-proxy.js';

type Json = Record<string, any>;

/** What a man in the middle does to the `iss` of an authorization response's redirect. */
type IssRewrite = 'keep' | 'strip' | { replaceWith: string };

/** A doorkeeper6 emulator reached through a gate proxy (its issuer: the proxy's address, as the client sees it) that rewrites `iss`. */
async function doorkeeper6(rewrite: IssRewrite) {
  let emulatorUrl = '';
  const proxy = await startGateProxy(() => emulatorUrl);
  const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper6', issuer: proxy.baseUrl });
  emulatorUrl = emulator.baseUrl;
  proxy.rewriteLocation('GET /oauth2/authorize', (location) => {
    if (rewrite === 'strip') location.searchParams.delete('iss');
    else if (rewrite !== 'keep') location.searchParams.set('iss', rewrite.replaceWith);
    return location;
  });
  const configDir = makeConfigDir();
  const env = {
    ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' }),
    MMAUTH_BASE_URL: proxy.baseUrl,
  };
  return { emulator, proxy, configDir, env };
}

describe('server metadata (RFC 8414) and iss (RFC 9207)', () => {
  it('a server without metadata whose authorization response names another issuer: the login fails at once with iss_mismatch, not after --wait', async () => {
    let targetUrl = '';
    const gate = await startGateProxy(() => targetUrl);
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    targetUrl = emulator.baseUrl;
    gate.rewriteLocation('GET /oauth2/authorize', (location) => {
      location.searchParams.set('iss', 'https://as.evil.example');
      return location;
    });
    const configDir = makeConfigDir();
    const env = {
      ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' }),
      MMAUTH_BASE_URL: gate.baseUrl,
    };
    const startedMs = Date.now();
    const login = await runCli(['login', '--json', '--wait', '60'], { env, timeoutMs: 70_000 });
    expect(login.code, login.stderr).toBe(4);
    expect((JSON.parse(login.stdout) as Json).error.code).toBe('iss_mismatch');
    // What must hold: it did not wait for --wait (60 s) to pass.
    expect(Date.now() - startedMs).toBeLessThan(45_000);
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);
  }, 80_000);

  it('M7: once a server promised iss, a later metadata 404 (a day on) does not drop the requirement: the login without iss is iss_missing, with a warning', async () => {
    let targetUrl = '';
    const gate = await startGateProxy(() => targetUrl);
    const promising = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper6', issuer: gate.baseUrl });
    targetUrl = promising.baseUrl;
    const configDir = makeConfigDir();
    const env = {
      ...promising.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' }),
      MMAUTH_BASE_URL: gate.baseUrl,
    };
    expect((await runCli(['login'], { env })).code).toBe(0);
    // The same address now answers as a server without metadata and without iss, the copy a day old.
    const silent = await startTestEmulator({
      autoApprove: true,
      flavor: 'doorkeeper5',
      clientSecret: promising.client.clientSecret,
    });
    targetUrl = silent.baseUrl;
    const config = readConfig(configDir) as Json;
    config.profiles.default.server_metadata.fetched_at = new Date(Date.now() - 2 * 86_400_000).toISOString();
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const login = await runCli(['login', '--json'], { env });
    expect(login.code, login.stderr).toBe(4);
    expect((JSON.parse(login.stdout) as Json).error.code).toBe('iss_missing');
    expect(login.stderr).toContain('no longer promises iss');
    expect(silent.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);
  });

  it('doorkeeper6: the login reads the metadata and stores it; status and doctor show it', async () => {
    const { proxy, configDir, env } = await doorkeeper6('keep');
    const login = await runCli(['login'], { env });
    expect(login.code, login.stderr).toBe(0);
    const stored = (readConfig(configDir) as Json).profiles.default.server_metadata;
    expect(stored.base_url).toBe(proxy.baseUrl);
    expect(stored.document).toMatchObject({
      issuer: proxy.baseUrl,
      token_endpoint: `${proxy.baseUrl}/oauth2/token`,
      authorization_response_iss_parameter_supported: true,
      source: 'oauth-authorization-server',
    });
    // status shows the endpoints the metadata names, from the profile (no request).
    const status = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as Json;
    expect(status.profiles[0].server_metadata).toMatchObject({
      issuer: proxy.baseUrl,
      token_endpoint: `${proxy.baseUrl}/oauth2/token`,
      iss_required: true,
    });
    const doctor = await runCli(['doctor', '--json'], { env });
    const checks = (JSON.parse(doctor.stdout) as Json).checks as Json[];
    const metadata = checks.find((check) => check.name === 'server metadata');
    expect(metadata?.status).toBe('ok');
    expect(metadata?.detail).toContain(`issuer ${proxy.baseUrl}`);
    expect(metadata?.detail).toContain('every authorization response must carry iss (RFC 9207)');
    // Doorkeeper 6 still offers the implicit flow: RFC 9700's warning.
    expect(checks.find((check) => check.name === 'implicit flow')?.status).toBe('warn');
  });

  it('doorkeeper6: an authorization response stripped of iss is refused: exit 4, iss_missing, nothing stored', async () => {
    const { emulator, configDir, env } = await doorkeeper6('strip');
    const login = await runCli(['login', '--json'], { env });
    expect(login.code).toBe(4);
    expect((JSON.parse(login.stdout) as Json).error.code).toBe('iss_missing');
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);
    expect(readConfigText(configDir) ?? '').not.toContain('access_token');
  });

  it('doorkeeper6: an authorization response naming another issuer is refused: exit 4, iss_mismatch', async () => {
    const { emulator, env } = await doorkeeper6({ replaceWith: 'https://as.evil.example' });
    const login = await runCli(['login', '--json'], { env });
    expect(login.code).toBe(4);
    expect((JSON.parse(login.stdout) as Json).error.code).toBe('iss_mismatch');
    expect(emulator.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(0);
  });

  it('doorkeeper5 (no metadata): the login as before; the profile records that there is none; doctor says so', async () => {
    const emulator = await startTestEmulator({ autoApprove: true, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
    const login = await runCli(['login'], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).not.toMatch(/metadata/);
    const paths = emulator.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`);
    expect(paths.filter((path) => path.includes('/.well-known/'))).toEqual([
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/openid-configuration',
    ]);
    expect((readConfig(configDir) as Json).profiles.default.server_metadata.document).toBeNull();
    const doctor = await runCli(['doctor', '--json'], { env });
    const metadata = ((JSON.parse(doctor.stdout) as Json).checks as Json[]).find((c) => c.name === 'server metadata');
    expect(metadata).toMatchObject({ status: 'ok', detail: expect.stringContaining('none (404') });
    // A second login within a day asks for no metadata again.
    const again = emulator.requests.length;
    expect((await runCli(['login'], { env })).code).toBe(0);
    expect(emulator.requests.slice(again).filter((r) => r.url.startsWith('/.well-known/'))).toEqual([]);
  });

  it("doctor warns on metadata without S256; a login refuses metadata naming an endpoint off the base URL's origin", async () => {
    let document: Json = {};
    const server = createServer((req, res) => {
      if (req.url === '/.well-known/oauth-authorization-server') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      server.closeAllConnections();
      server.close();
    });
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_BASE_URL: baseUrl, MMAUTH_CLIENT_ID: 'c' };
    document = {
      issuer: baseUrl,
      token_endpoint: `${baseUrl}/oauth2/token`,
      code_challenge_methods_supported: ['plain'],
    };
    const doctor = JSON.parse((await runCli(['doctor', '--json'], { env })).stdout) as Json;
    const pkce = (doctor.checks as Json[]).find((check) => check.name === 'PKCE');
    expect(pkce).toMatchObject({ status: 'warn', detail: expect.stringContaining('without S256') });
    document = { issuer: baseUrl, token_endpoint: 'https://elsewhere.example/oauth2/token' };
    const login = await runCli(['login', '--no-browser', '--wait', '1', '--json'], { env });
    expect(login.stderr).toContain("could not read the server's metadata");
    expect(login.stderr).toContain("mmauth sends credentials only to the base URL's origin");
  });
});
