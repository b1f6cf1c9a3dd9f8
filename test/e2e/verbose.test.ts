import { describe, expect, it } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from '../support/cli.js';
import { startTestEmulator, storedAccessToken } from '../support/emulator.js';

describe('--verbose / MMAUTH_DEBUG=1: every HTTP exchange traced, no secret in it', () => {
  it('traces login, info, client-credentials, revoke, implicit login, --with-token and logout without a raw token, code, secret or verifier', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const env = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER });
    const runs: { name: string; stdout: string; stderr: string }[] = [];
    const run = async (
      name: string,
      args: string[],
      extra: Record<string, string | undefined> = {},
      input?: string,
    ) => {
      const result = await runCli(args, { env: { ...env, ...extra }, ...(input === undefined ? {} : { input }) });
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      runs.push({ name, stdout: result.stdout, stderr: result.stderr });
      return result;
    };

    await run('login', ['login', '--verbose']);
    const codeFlowToken = storedAccessToken(configDir);
    await run('info', ['info'], { MMAUTH_DEBUG: '1' });
    await run('client-credentials', ['client-credentials', '--profile', 'ci', '--verbose']);
    const clientToken = storedAccessToken(configDir, 'ci');
    await run('revoke', ['revoke', '--profile', 'ci', '--verbose']);
    await run('implicit', ['login', '--implicit', '--profile', 'browser', '--verbose'], {
      MMAUTH_CLIENT_SECRET: undefined,
    });
    const implicitToken = storedAccessToken(configDir, 'browser');
    await run(
      'with-token',
      ['login', '--with-token', '--profile', 'pat', '--verbose'],
      {},
      emulator.personalAccessToken,
    );
    await run('token', ['token', '--profile', 'browser', '--verbose']);
    await run('header', ['header', '--profile', 'browser', '--verbose']);
    await run('status', ['status', '--verbose']);
    await run('logout', ['logout', '--verbose']);

    const exchange = emulator.requests.find(
      (r) => r.method === 'POST' && r.url === '/oauth2/token' && r.body.includes('grant_type=authorization_code'),
    );
    const exchangeBody = new URLSearchParams(exchange?.body);
    const secrets = {
      'client secret': emulator.client.clientSecret,
      'authorization code': exchangeBody.get('code') ?? '',
      'PKCE verifier': exchangeBody.get('code_verifier') ?? '',
      'code flow token': codeFlowToken,
      'client credentials token': clientToken,
      'implicit token': implicitToken,
      'personal access token': emulator.personalAccessToken,
    };
    for (const [what, value] of Object.entries(secrets)) {
      expect(value.length, what).toBeGreaterThanOrEqual(20);
      for (const { name, stdout, stderr } of runs) {
        expect(stderr.includes(value), `${what} in the stderr of ${name}`).toBe(false);
        // token and header print the token on stdout: that is what they are for.
        const isAsked = (name === 'token' || name === 'header') && what === 'implicit token';
        expect(stdout.includes(value), `${what} in the stdout of ${name}`).toBe(isAsked);
      }
    }

    // The trace is there: requests, statuses, redacted fields.
    const all = runs.map((r) => r.stderr).join('\n');
    expect(all).toMatch(/^> POST http:\/\/127\.0\.0\.1:\d+\/oauth2\/token$/m);
    expect(all).toMatch(/^< 200 OK \(\d+ ms, \d+ bytes\)$/m);
    expect(all).toMatch(/^> .*code=\[redacted\].*code_verifier=\[redacted\]/m);
    expect(all).toMatch(/client_secret=\[redacted\]/);
    expect(all).toMatch(/"access_token":"\[redacted\]"/);
    expect(all).toMatch(/^> authorization: Bearer \[redacted\]$/m);
    expect(all).toMatch(/^> POST http:\/\/127\.0\.0\.1:\d+\/oauth2\/revoke$/m);
    expect(all).toMatch(/^< redirect http:\/\/127\.0\.0\.1:\d+\/callback#access_token=\[redacted\]/m);
  });

  it('--json prints the token on stdout where the user asked for it, and still not on stderr', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const result = await runCli(['client-credentials', '--json', '--verbose'], { env: emulator.env(configDir) });
    expect(result.code).toBe(0);
    const accessToken = storedAccessToken(configDir);
    expect(JSON.parse(result.stdout).access_token).toBe(accessToken);
    expect(result.stderr).not.toContain(accessToken);
    expect(result.stderr).not.toContain(emulator.client.clientSecret);
    // The header fields as sent: the form content type the transport adds, and mmauth's User-Agent.
    expect(result.stderr).toContain('> content-type: application/x-www-form-urlencoded;charset=UTF-8');
    expect(result.stderr).toMatch(/> user-agent: mmauth\/\d+\.\d+\.\d+/);
  });
});
