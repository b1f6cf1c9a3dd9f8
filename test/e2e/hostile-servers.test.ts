/**
 * mmauth against servers that misbehave at the token, token info and revoke endpoints. For each:
 * one error line naming the endpoint and what was wrong (plus at most a hint), the documented exit
 * code (1 malformed or 5xx, 3 reset, TLS failure or timeout), no stack trace, nothing on stdout, and
 * the stored token byte-identical afterwards.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';
import { readConfigText } from '../support/emulator.js';
import { CASES, COMMAND_FOR, GOOD_INFO, GOOD_TOKEN, ROUTE } from '../support/hostile-cases.js';
import {
  json,
  makeSelfSignedCertificate,
  startHostileServer,
  type SelfSignedCertificate,
} from '../support/hostile-server.js';

const CLIENT_SECRET = 'hostile-test-secret-0123456789';
const STORED_TOKEN = 'stored-token-that-must-survive-0123456789';
/** A config whose default profile points at `baseUrl` and holds a valid stored token. */
function writeProfile(configDir: string, baseUrl: string): string {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const text = JSON.stringify({
    profiles: {
      default: {
        base_url: baseUrl,
        client_id: 'hostile-client',
        client_secret: CLIENT_SECRET,
        scope: 'service',
        token: {
          access_token: STORED_TOKEN,
          token_type: 'bearer',
          grant: 'client_credentials',
          obtained_at: new Date().toISOString(),
          scope: 'service',
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        },
      },
    },
  });
  writeFileSync(join(configDir, 'config.json'), text, { mode: 0o600 });
  return text;
}

describe('hostile and broken servers', () => {
  it.each(CASES)(
    '%s (%s)',
    async (_what, endpoint, behaviour, exitCode, message) => {
      // The other endpoints behave, so that each case tests one misbehaviour.
      const server = await startHostileServer({
        [ROUTE.token]: json(GOOD_TOKEN),
        [ROUTE.info]: json(GOOD_INFO),
        [ROUTE.revoke]: json({}),
        [ROUTE[endpoint]]: behaviour,
        'POST /elsewhere': json(GOOD_TOKEN),
        'GET /elsewhere': json(GOOD_INFO),
      });
      const configDir = makeConfigDir();
      const before = writeProfile(configDir, server.baseUrl);
      const result = await runCli([COMMAND_FOR[endpoint], '--timeout', '1'], {
        env: { MMAUTH_CONFIG_DIR: configDir },
        timeoutMs: 15_000,
      });

      expect(result.code, result.stderr).toBe(exitCode);
      const lines = result.stderr.trimEnd().split('\n');
      const errorLines = lines.filter((line) => line.startsWith('error:'));
      expect(errorLines, result.stderr).toHaveLength(1);
      expect(errorLines[0]).toMatch(message);
      expect(lines.length, result.stderr).toBeLessThanOrEqual(lines.indexOf(errorLines[0] ?? '') + 2);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(result.stderr).not.toContain(CLIENT_SECRET);
      expect(result.stdout).toBe('');
      expect(readConfigText(configDir)).toBe(before);
      // A redirect is never followed: nothing reached /elsewhere, so the secret was sent once only.
      expect(server.requests.filter((r) => r.url === '/elsewhere')).toHaveLength(0);
    },
    20_000,
  );

  it(`tries at least 30 misbehaviours (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });
});

describe('TLS failures (exit 3, with the NODE_EXTRA_CA_CERTS hint)', () => {
  let tls: SelfSignedCertificate;
  beforeAll(() => {
    tls = makeSelfSignedCertificate();
  });
  afterAll(() => tls.remove());

  it('a self-signed certificate', async () => {
    const server = await startHostileServer({ [ROUTE.token]: json(GOOD_TOKEN) }, tls);
    const configDir = makeConfigDir();
    const before = writeProfile(configDir, server.baseUrl);
    const result = await runCli(['client-credentials', '--timeout', '5'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /error: POST https:\/\/127\.0\.0\.1:\d+\/oauth2\/token: TLS failure \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    );
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(result.stdout).toBe('');
    expect(readConfigText(configDir)).toBe(before);
    expect(server.requests).toHaveLength(0);
  });

  it('an unknown issuer (an intercepting proxy, a private CA): the hint names the CA settings of the Node that runs, never switching verification off', async () => {
    const server = await startHostileServer({ [ROUTE.token]: json(GOOD_TOKEN) }, tls);
    const configDir = makeConfigDir();
    writeProfile(configDir, server.baseUrl);
    const result = await runCli(['client-credentials', '--no-save'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(3);
    const hint = result.stderr.split('\n')[1] ?? '';
    expect(hint).toContain('a proxy or a private CA signed the certificate');
    expect(hint).toContain('NODE_EXTRA_CA_CERTS');
    // Node 22 and 24 read the system's store on request (the suite runs on both in CI); Node 20 cannot.
    if (process.allowedNodeEnvironmentFlags.has('--use-system-ca')) expect(hint).toContain('NODE_USE_SYSTEM_CA=1');
    else expect(hint).not.toContain('NODE_USE_SYSTEM_CA');
    expect(result.stderr).not.toMatch(/NODE_TLS_REJECT_UNAUTHORIZED|rejectUnauthorized|--insecure/);
  });

  it('the same server trusted through NODE_EXTRA_CA_CERTS works', async () => {
    const server = await startHostileServer({ [ROUTE.token]: json(GOOD_TOKEN) }, tls);
    const configDir = makeConfigDir();
    writeProfile(configDir, server.baseUrl);
    const result = await runCli(['client-credentials', '--no-save', '--json'], {
      env: { MMAUTH_CONFIG_DIR: configDir, NODE_EXTRA_CA_CERTS: tls.certFile },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).access_token).toBe(GOOD_TOKEN.access_token);
  });

  it('https to a server that speaks plain http', async () => {
    const server = await startHostileServer({ [ROUTE.token]: json(GOOD_TOKEN) });
    const configDir = makeConfigDir();
    const before = writeProfile(configDir, server.baseUrl.replace('http:', 'https:'));
    const result = await runCli(['client-credentials', '--timeout', '5'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /error: POST https:\/\/127\.0\.0\.1:\d+\/oauth2\/token: the server there does not speak TLS/,
    );
    expect(result.stderr).toContain('use http:// if the server is plain http on loopback');
    expect(result.stderr).not.toContain('NODE_EXTRA_CA_CERTS');
    expect(readConfigText(configDir)).toBe(before);
  });
});
