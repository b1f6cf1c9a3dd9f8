/**
 * A web page against `mmauth proxy` (issue 33: "a web page cannot use it"), in a real browser
 * (test/support/chromium-flags.mjs chooses it): a page on another origin makes the browser send GETs
 * to the proxy (an image, a no-cors fetch, a frame). Browsers send no `Origin` with those, and the
 * proxy's own `Host` is right, so only the browser's `Sec-Fetch-Site` tells them apart (P7).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openChromiumPage } from '../support/chromium-page.js';
import { startTestEmulator } from '../support/emulator.js';
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
    expect(emulator.requests.slice(before).map((r) => r.url)).toEqual(['/api/me']);
  }, 60_000);
});
