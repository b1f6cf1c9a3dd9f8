/**
 * mmauth in a real terminal: tmux runs it on a pseudo-terminal, the test types with send-keys and
 * reads the screen with capture-pane. tmux is installed by .ci/run; nothing here is skipped.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BIN, HEADLESS_BROWSER, makeConfigDir } from '../support/cli.js';
import { readConfig, startTestEmulator } from '../support/emulator.js';
import { startInTmux } from '../support/tmux.js';

/** Whether something accepts connections on 127.0.0.1:port. */
function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('login in a real terminal (tmux)', { timeout: 40_000 }, () => {
  it('client-credentials asks for the scopes with a checkbox and for the secret with a masked prompt; the secret never reaches the screen', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const secret = emulator.client.clientSecret;
    // login needs no secret (it runs as a public client without one); client-credentials always does.
    const term = startInTmux([process.execPath, BIN, 'client-credentials'], {
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
    });

    await term.waitFor(/Scopes to request/);
    expect(term.screen()).toMatch(/◉ service/);
    // The spec's known scopes, in order: service, userprofile.email, userprofile.profile, userinfo.email, …
    term.send(['Down', 'Down', 'Down', 'Space']);
    await term.waitFor(/◉ userinfo\.email/);
    term.send(['Enter']);

    await term.waitFor(/Client secret/);
    term.send([secret.slice(0, 10)], { literal: true });
    await term.waitFor(/Client secret:? \*{10}\s*$/m);
    expect(term.screen()).not.toContain(secret.slice(0, 10));
    term.send([secret.slice(10)], { literal: true });
    await term.waitFor(new RegExp(`Client secret:? \\*{${secret.length}}\\s*$`, 'm'));
    term.send(['Enter']);

    await term.waitFor(/Got a client credentials token/, 20_000);
    expect(await term.exitCode()).toBe(0);
    const screen = term.screen();
    expect(screen).not.toContain(secret);
    expect(screen).toMatch(/scope:\s+service userinfo\.email/);
    expect(readConfig(configDir)).toMatchObject({
      profiles: {
        default: {
          client_secret: secret,
          scope: 'service userinfo.email',
          token: { grant: 'client_credentials', scope: 'service userinfo.email' },
        },
      },
    });
  });

  it('asks for a missing base URL and client id with text prompts, and re-asks for an http URL that is not loopback', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const term = startInTmux([process.execPath, BIN, 'client-credentials', '--scope', 'service'], {
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    });
    await term.waitFor(/Service base URL/);
    term.send(['http://maps.example.com', 'Enter']);
    await term.waitFor(/refusing plain http/);
    term.send(['C-u']);
    term.send([emulator.baseUrl, 'Enter']);
    await term.waitFor(/Client id/);
    term.send([emulator.client.clientId, 'Enter']);
    await term.waitFor(/Got a client credentials token/);
    expect(await term.exitCode()).toBe(0);
    expect(readConfig(configDir)).toMatchObject({
      profiles: { default: { base_url: emulator.baseUrl, client_id: emulator.client.clientId } },
    });
  });

  it('Ctrl-C while login waits for the browser: exit 130 and the listener port is closed', async () => {
    const emulator = await startTestEmulator();
    const term = startInTmux([process.execPath, BIN, 'login', '--no-browser', '--scope', 'service'], {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    });
    const [, port] = await term.waitFor(/Waiting for the redirect to http:\/\/127\.0\.0\.1:(\d+)\/callback/);
    expect(await isListening(Number(port))).toBe(true);
    term.send(['C-c']);
    expect(await term.exitCode()).toBe(130);
    expect(term.screen()).toMatch(/error:.*interrupted/);
    expect(await isListening(Number(port))).toBe(false);
  });

  it('a confidential client without a secret: said before the browser; refused, it asks for the secret (masked) and retries with the same code (25 item 7)', async () => {
    const emulator = await startTestEmulator();
    const configDir = makeConfigDir();
    const term = startInTmux([process.execPath, BIN, 'login', '--scope', 'service'], {
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CREDENTIAL_STORE: 'file',
      BROWSER: HEADLESS_BROWSER,
    });
    await term.waitFor(/Client secret:/);
    const before = term.screen();
    expect(before.indexOf('No client secret given: signing in as a public client')).toBeGreaterThan(-1);
    expect(before.indexOf('No client secret given')).toBeLessThan(before.indexOf('Open this URL'));
    expect(before).toContain(
      `refused the login without a client secret: ${emulator.client.clientId} is a confidential client`,
    );
    term.send([emulator.client.clientSecret], { literal: true });
    term.send(['Enter']);
    expect(await term.exitCode()).toBe(0);
    expect(term.screen()).not.toContain(emulator.client.clientSecret);
    expect(term.screen()).toContain('Logged in to');
    const codeExchanges = emulator.requests.filter((r) => r.url === '/oauth2/token');
    expect(codeExchanges).toHaveLength(2);
    const codes = codeExchanges.map((r) => new URLSearchParams(r.body).get('code'));
    expect(codes[0]).toBe(codes[1]);
    expect(readConfig(configDir)).toMatchObject({
      profiles: { default: { client_secret: emulator.client.clientSecret } },
    });
  });

  it('login waits with a spinner on a terminal, and a URL pasted under it arrives whole (25 item 13)', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const term = startInTmux([process.execPath, BIN, 'login', '--no-browser', '--scope', 'service'], {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    });
    const spinner =
      /([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) Waiting for the redirect to http:\/\/127\.0\.0\.1:\d+\/callback — (?:\d+m )?\d+s? left, Ctrl-C to cancel/;
    const [, firstFrame] = await term.waitFor(spinner);
    // Typed text stays under the prompt while the spinner turns.
    term.send(['abc'], { literal: true });
    await term.waitFor(/> abc/);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [, laterFrame] = await term.waitFor(spinner);
    expect(laterFrame).not.toBe(firstFrame);
    expect(term.screen()).toMatch(/> abc/);
    term.send(['BSpace', 'BSpace', 'BSpace']);
    // A line that is no redirect: refused above the prompt, and waiting goes on under the spinner.
    term.send(['not-a-url'], { literal: true });
    term.send(['Enter']);
    await term.waitFor(/! not accepted: [^\n]*; still waiting for the redirect\n[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for the redirect/);
    const [authorizationUrl] = await term.waitFor(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    // A browser elsewhere: it ends on the redirect URI, which the user pastes here.
    const answer = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = answer.headers.get('location') ?? '';
    expect(location).toMatch(/\/callback\?code=/);
    term.send([location], { literal: true });
    term.send(['Enter']);
    expect(await term.exitCode()).toBe(0);
    expect(term.screen()).toContain('Logged in to');
  });
});
