/**
 * `mmauth api`: one authenticated request to the profile's server, the body on stdout byte for
 * byte, exit codes by status, one renewal and replay after a 401 invalid_token, and no token ever
 * sent to another origin.
 */
import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { json, startHostileServer } from '../support/hostile-server.js';
import { startListeningFixture } from '../support/listening-fixture.js';
import { inS, writeProfiles } from '../support/profiles.js';

async function loggedIn(options: Parameters<typeof startTestEmulator>[0] = {}) {
  const emulator = await startTestEmulator(options);
  const configDir = makeConfigDir();
  const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
  expect((await runCli(['login'], { env })).code).toBe(0);
  return { emulator, configDir, env };
}

describe('mmauth api against the emulator', () => {
  it('GET /api/me prints the owner as JSON; -i puts the status line and header fields first', async () => {
    const { env } = await loggedIn();
    const me = await runCli(['api', '/api/me'], { env });
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toEqual({ id: 42, scope: 'service', application_uid: 'mmauth-demo' });
    const included = await runCli(['api', '-i', '/api/me'], { env });
    expect(included.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\ncontent-type: application\/json/i);
    expect(included.stdout).toContain('\r\n\r\n{"id":42');
  });

  it('-X POST -d @- sends standard input as the body, JSON typed as such; -f builds a JSON body or, with -X GET, the query', async () => {
    const { env } = await loggedIn();
    const posted = await runCli(['api', '-X', 'POST', '/api/echo', '-d', '@-'], { env, input: '{"title":"Plans"}' });
    expect(posted.code, posted.stderr).toBe(0);
    expect(JSON.parse(posted.stdout)).toEqual({
      method: 'POST',
      query: {},
      content_type: 'application/json',
      body: '{"title":"Plans"}',
    });
    const fields = await runCli(['api', '/api/echo', '-f', 'a=1', '-f', 'b=two'], { env });
    expect(JSON.parse(fields.stdout)).toMatchObject({ method: 'POST', body: '{"a":"1","b":"two"}' });
    const query = await runCli(['api', '/api/echo', '-X', 'GET', '-f', 'q=maps'], { env });
    expect(JSON.parse(query.stdout)).toMatchObject({ method: 'GET', query: { q: 'maps' } });
  });

  it('an expired access token with a refresh token: api renews first and succeeds', async () => {
    const { emulator, env, configDir } = await loggedIn({ tokenTtlS: 60 });
    const { readConfig } = await import('../support/emulator.js');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const config = readConfig(configDir) as { profiles: { default: { token: Record<string, string> } } };
    config.profiles.default.token.expires_at = inS(-5);
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    emulator.advanceSeconds(120);
    const me = await runCli(['api', '/api/me'], { env });
    expect(me.code, me.stderr).toBe(0);
    expect(emulator.requests.filter((r) => r.body.includes('grant_type=refresh_token'))).toHaveLength(1);
  });

  it.each([
    ['/api/me with a revoked token (401)', 'revoked', 4],
    ['/api/me with a token without the service scope (403)', 'scope', 4],
    ['a path the server does not have (404)', '/nope', 1],
  ])('%s: exit by the table, the body still on stdout', async (_what, how, exitCode) => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const configDir = makeConfigDir();
    const scope = how === 'scope' ? 'userinfo.email' : 'service';
    const env = emulator.env(configDir, {
      BROWSER: HEADLESS_BROWSER,
      MMAUTH_CLIENT_SECRET: undefined,
      MMAUTH_CLIENT_ID: 'mmauth-public',
    });
    expect((await runCli(['login', '--scope', scope], { env })).code).toBe(0);
    if (how === 'revoked') expect((await runCli(['api', '/api/me'], { env })).code).toBe(0);
    if (how === 'revoked') emulator.state.revokeToken((await runCli(['token'], { env })).stdout.trim());
    const result = await runCli(['api', how.startsWith('/') ? how : '/api/me', '--no-renew'], { env });
    expect(result.code).toBe(exitCode);
    // Doorkeeper's 401 has no body: the reason is in WWW-Authenticate.
    if (how === 'revoked') expect(result.stdout).toBe('');
    if (how === 'scope') expect(JSON.parse(result.stdout).error).toBe('insufficient_scope');
  });
});

describe('mmauth api against a server that answers 401 invalid_token once', () => {
  it('renews exactly once and replays exactly once; a 500 after that is exit 1 with its body', async () => {
    let apiCalls = 0;
    const server = await startHostileServer({
      'POST /oauth2/token': json({
        access_token: 'renewed-access-token-0123456789',
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: 'next-refresh-0123456789',
      }),
      'GET /api/x': (_req, res) => {
        apiCalls += 1;
        if (apiCalls === 1) {
          res.writeHead(401, {
            'www-authenticate': 'Bearer error="invalid_token"',
            'content-type': 'application/json',
          });
          res.end('{"error":"invalid_token"}');
        } else {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(Buffer.from([0, 1, 2, 255, 254]));
        }
      },
      'GET /api/broken': (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('boom');
      },
    });
    const configDir = makeConfigDir();
    writeProfiles(configDir, {
      default: {
        base_url: server.baseUrl,
        client_id: 'app',
        client_secret: 'secret-0123456789',
        token: {
          access_token: 'old-access-token-0123456789',
          token_type: 'bearer',
          grant: 'authorization_code',
          obtained_at: inS(-60),
          expires_at: inS(3000),
          scope: 'service',
          refresh_token: 'old-refresh-0123456789',
        },
      },
    });
    const result = await runCli(['api', '/api/x'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(result.code, result.stderr).toBe(0);
    expect(Buffer.from(result.stdout, 'latin1')).toBeDefined();
    expect(server.requests.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
    expect(server.requests.filter((r) => r.url === '/api/x').map((r) => r.headers.authorization)).toEqual([
      'Bearer old-access-token-0123456789',
      'Bearer renewed-access-token-0123456789',
    ]);
    const broken = await runCli(['api', '/api/broken'], { env: { MMAUTH_CONFIG_DIR: configDir } });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toBe('boom');
  });
});

describe('the token never goes to another origin', () => {
  it('an absolute URL elsewhere: exit 2 before any connection (the listening server sees none)', async () => {
    const { env } = await loggedIn();
    const fixture = await startListeningFixture();
    const result = await runCli(['api', `${fixture.baseUrl}/api/me`], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${fixture.baseUrl} is not the profile's server`);
    expect(fixture.connections()).toBe(0);
  });

  it('-H Authorization is refused: mmauth owns it', async () => {
    const { env } = await loggedIn();
    const result = await runCli(['api', '/api/me', '-H', 'Authorization: Bearer x'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("the Authorization header is mmauth's");
  });
});
