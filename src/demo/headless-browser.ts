/**
 * A small headless user agent for the demo and the tests, given to `mmauth login` through BROWSER:
 * it opens the authorization URL (or mmauth's one-time start address), signs in, presses Allow (or
 * Deny), follows redirects with a cookie jar, and stops at the redirect URI. It understands plain HTML forms: the emulator's pages
 * and oidc-provider's development interaction pages. It runs no JavaScript; for the implicit
 * flow's relay page it does by hand what the page's script does.
 *
 *   BROWSER="node dist/demo/headless-browser.js" mmauth login …
 *   env: MMAUTH_AGENT_LOGIN (demo), MMAUTH_AGENT_PASSWORD (demo), MMAUTH_AGENT_DECISION (allow|deny),
 *        MMAUTH_AGENT_UNREACHABLE_FILE (play a remote browser: write the final URL there instead of loading it)
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CookieJar } from './cookie-jar.js';

/** What the agent does on the pages. */
export interface AgentOptions {
  login: string;
  password: string;
  decision: 'allow' | 'deny';
  /** Receives one line per step (method, URL without query, status). */
  log: (line: string) => void;
  /** Bound on the whole run, in ms. */
  timeoutMs: number;
  /**
   * Play a browser on another machine that cannot reach the loopback redirect URI: stop before
   * requesting it and return its URL (status 0), which the user would then paste back.
   */
  isRedirectUnreachable?: boolean;
}

/** Where the run ended: the last URL and what its page said. */
export interface AgentResult {
  finalUrl: string;
  status: number;
  body: string;
}

interface HtmlForm {
  attrs: Record<string, string>;
  html: string;
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x?[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    const lower = entity.toLowerCase();
    if (named[lower] !== undefined) return named[lower];
    return String.fromCodePoint(lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10));
  });
}

function parseAttributes(tag: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const match of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    const name = match[1];
    if (name !== undefined) attrs[name.toLowerCase()] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attrs;
}

function findForms(html: string): HtmlForm[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map((m) => ({
    attrs: parseAttributes(m[1] ?? ''),
    html: m[2] ?? '',
  }));
}

/** The fields a browser would submit for `form`, with the given button pressed. */
function formFields(form: HtmlForm, fill: Record<string, string>): URLSearchParams {
  const fields = new URLSearchParams();
  for (const match of form.html.matchAll(/<input\b([^>]*)>/gi)) {
    const attrs = parseAttributes(match[1] ?? '');
    if (attrs.name === undefined) continue;
    fields.append(attrs.name, fill[attrs.name] ?? attrs.value ?? '');
  }
  const button = /<button\b([^>]*)>/i.exec(form.html);
  const buttonAttrs = button === null ? {} : parseAttributes(button[1] ?? '');
  if (buttonAttrs.name !== undefined) fields.append(buttonAttrs.name, buttonAttrs.value ?? '');
  return fields;
}

/**
 * Runs the agent from `startUrl` (the authorization URL, or mmauth's one-time start address that
 * redirects to it) until a response comes from an origin other than the authorization server's
 * (the redirect URI), then returns it. Cookies are kept per host, as a browser keeps them (the
 * listener accepts a callback only with the cookie its start address set). Throws when a page has
 * nothing it understands, after 25 steps, or after `timeoutMs`.
 */
export async function runHeadlessBrowser(startUrl: string, options: AgentOptions): Promise<AgentResult> {
  // The authorization server: the first origin serving its authorization endpoint (a start address redirects there).
  const isAuthorizeUrl = (url: URL) => url.pathname.endsWith('/oauth2/authorize') || !/^\/start\//.test(url.pathname);
  let serverOrigin: string | undefined;
  const jar = new CookieJar();
  const signal = AbortSignal.timeout(options.timeoutMs);
  let request: { url: string; method: 'GET' | 'POST'; body?: URLSearchParams } = { url: startUrl, method: 'GET' };
  for (let step = 0; step < 25; step++) {
    const url = new URL(request.url);
    if (serverOrigin === undefined && isAuthorizeUrl(url)) serverOrigin = url.origin;
    const isServer = serverOrigin === undefined || url.origin === serverOrigin;
    if (!isServer && options.isRedirectUnreachable === true) {
      options.log(`GET ${url.origin}${url.pathname} → unreachable from this machine`);
      return { finalUrl: url.href, status: 0, body: '' };
    }
    const headers: Record<string, string> = {};
    const cookie = jar.headerFor(url);
    if (cookie !== undefined) headers.cookie = cookie;
    if (request.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method: request.method,
      headers,
      redirect: 'manual',
      signal,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    options.log(`${request.method} ${url.origin}${url.pathname} → ${response.status}`);
    jar.take(url, response);
    const body = await response.text();
    if (!isServer) {
      if (/data-relay="fragment"/.test(body)) {
        return relayFragment(url, jar.headerFor(url), signal, options);
      }
      return { finalUrl: url.href, status: response.status, body };
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      request = { url: new URL(location, url).href, method: 'GET' };
      continue;
    }
    request = nextRequest(url, body, options);
  }
  throw new Error('gave up after 25 steps without reaching the redirect URI');
}

/**
 * Does what the implicit flow's relay page script does in a real browser (the agent runs no
 * JavaScript): POSTs the fragment to the same path, from the same origin. The body is the
 * listener's JSON verdict.
 */
async function relayFragment(
  url: URL,
  cookie: string | undefined,
  signal: AbortSignal,
  options: AgentOptions,
): Promise<AgentResult> {
  const response = await fetch(`${url.origin}${url.pathname}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: url.origin,
      ...(cookie === undefined ? {} : { cookie }),
    },
    body: url.hash.slice(1),
    signal,
  });
  options.log(`POST ${url.origin}${url.pathname} (the relay page hands over the fragment) → ${response.status}`);
  return { finalUrl: url.href, status: response.status, body: await response.text() };
}

function nextRequest(
  pageUrl: URL,
  html: string,
  options: AgentOptions,
): { url: string; method: 'GET' | 'POST'; body?: URLSearchParams } {
  const forms = findForms(html);
  const submit = (form: HtmlForm, fill: Record<string, string> = {}) => ({
    url: new URL(form.attrs.action ?? pageUrl.href, pageUrl).href,
    method: (form.attrs.method ?? 'get').toUpperCase() === 'POST' ? ('POST' as const) : ('GET' as const),
    body: formFields(form, fill),
  });
  const cancel = /<a\s[^>]*href="([^"]*)"[^>]*>\s*\[ Cancel \]\s*<\/a>/i.exec(html);
  if (options.decision === 'deny' && cancel?.[1] !== undefined && !/id="deny"/.test(html)) {
    return { url: new URL(decodeEntities(cancel[1]), pageUrl).href, method: 'GET' };
  }
  const login = forms.find((form) => /type="password"/i.test(form.html));
  if (login !== undefined) {
    return submit(login, { login: options.login, password: options.password });
  }
  const deny = forms.find(
    (form) => /name="_method"\s+value="delete"/i.test(form.html) || form.attrs.id === 'deny-form',
  );
  const allow = forms.find((form) => form !== deny);
  const chosen = options.decision === 'deny' ? deny : allow;
  if (chosen === undefined) {
    const error = /<p id="error"[^>]*>([^<]*)</.exec(html)?.[1];
    throw new Error(
      `no ${options.decision} form on ${pageUrl.origin}${pageUrl.pathname}${error === undefined ? '' : `: ${decodeEntities(error)}`}`,
    );
  }
  return submit(chosen);
}

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1];
  if (url === undefined || !/^https?:\/\//.test(url)) {
    process.stderr.write('usage: headless-browser.js URL\n');
    process.exit(2);
  }
  const decision = process.env.MMAUTH_AGENT_DECISION === 'deny' ? 'deny' : 'allow';
  const unreachableFile = process.env.MMAUTH_AGENT_UNREACHABLE_FILE || undefined;
  try {
    const result = await runHeadlessBrowser(url, {
      login: process.env.MMAUTH_AGENT_LOGIN ?? 'demo',
      password: process.env.MMAUTH_AGENT_PASSWORD ?? 'demo',
      decision,
      log: (line) => process.stderr.write(`[headless-browser] ${line}\n`),
      timeoutMs: 30_000,
      isRedirectUnreachable: unreachableFile !== undefined,
    });
    if (unreachableFile !== undefined) {
      writeFileSync(unreachableFile, `${result.finalUrl}\n`, { mode: 0o600 });
      return;
    }
    const verdict =
      /data-result="(\w+)"|"result":"(\w+)"/
        .exec(result.body)
        ?.slice(1)
        .find((v) => v !== undefined) ?? 'unknown';
    process.stderr.write(`[headless-browser] the redirect URI answered ${result.status}, page result: ${verdict}\n`);
  } catch (error) {
    process.stderr.write(`[headless-browser] ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}
