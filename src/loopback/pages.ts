import { createHash } from 'node:crypto';
import { escapeHtml } from '../util/escape-html.js';

/** The verdict a callback page shows. */
export interface CallbackPage {
  isSuccess: boolean;
  title: string;
  /** Plain text; escaped here. */
  detail: string;
}

/**
 * A self-contained HTML page (no external resources, inline style only) telling the person in the
 * browser what happened; every dynamic part is escaped.
 */
export function renderCallbackPage(page: CallbackPage): string {
  const colour = page.isSuccess ? '#1a7f37' : '#cf222e';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>mmauth: ${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem;color:${colour}}p{color:#59636e}</style></head>
<body><h1 id="result" data-result="${page.isSuccess ? 'success' : 'error'}">${escapeHtml(page.title)}</h1>
<p id="detail">${escapeHtml(page.detail)}</p>
<p>You can close this window and return to the terminal.</p></body></html>
`;
}

/** The script of the fragment relay page; its hash goes into the page's CSP. */
const RELAY_SCRIPT = `(function () {
  var title = document.getElementById('result'), detail = document.getElementById('detail');
  function show(result, heading, text) {
    title.textContent = heading; title.setAttribute('data-result', result); detail.textContent = text;
    document.title = 'mmauth: ' + heading;
  }
  fetch(location.pathname, { method: 'POST', body: location.hash.slice(1), credentials: 'same-origin', cache: 'no-store',
    headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    .then(function (response) { return response.json(); })
    .then(function (verdict) {
      // The token has reached mmauth: take it out of the address bar and the history entry.
      if (verdict.result === 'success') history.replaceState(null, '', location.pathname);
      show(verdict.result, verdict.title, verdict.detail);
    })
    .catch(function () { show('error', 'Could not reach mmauth', 'The terminal may have stopped waiting. Copy the full URL from the address bar and paste it into the terminal.'); });
})();`;

let relayCsp: string | undefined;

/**
 * The Content-Security-Policy that lets exactly the relay script run (CSP3 hash source) and talk to
 * its own origin; hashed on first use, so a start-up that serves no relay page pays nothing.
 */
export function relayContentSecurityPolicy(): string {
  relayCsp ??= `default-src 'none'; script-src 'sha256-${createHash('sha256').update(RELAY_SCRIPT).digest('base64')}'; style-src 'unsafe-inline'; connect-src 'self'`;
  return relayCsp;
}

/**
 * The page served at the redirect path in the implicit flow (RFC 6749 §4.2.2: the token is in the
 * fragment, which browsers never send to a server). Its one inline script POSTs `location.hash`
 * to the same path and shows mmauth's verdict; without JavaScript it says how to paste the URL.
 */
export function renderRelayPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer">
<title>mmauth: finishing sign-in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}h1[data-result=success]{color:#1a7f37}h1[data-result=error]{color:#cf222e}p{color:#59636e}</style></head>
<body data-relay="fragment"><h1 id="result" data-result="pending">Finishing sign-in…</h1>
<p id="detail">Handing the result to mmauth.</p>
<noscript><p>This page needs JavaScript to hand the result to mmauth. Instead, copy the full URL from the address bar and paste it into the terminal where mmauth is waiting.</p></noscript>
<p>You can close this window and return to the terminal once it says so.</p>
<script>${RELAY_SCRIPT}</script></body></html>
`;
}
