/**
 * Echoes the scrubber missed (issue 31: N24/N25): a server that hands the request back upper- or
 * lower-cased, as a Base64 blob of the whole body, HTML-escaped, spaced out, in hex, or as `\u`
 * escapes inside JSON. Nothing mmauth prints (stderr, the --json error) holds the secret in any
 * of these forms; the server's description is withheld instead.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { startHostileServer } from '../support/hostile-server.js';

const SECRET = 'Client-Secret-To-Keep-0123456789';

/** The disguises a careless or hostile server may echo a request body in. */
const DISGUISES: Array<[string, (body: string) => string]> = [
  ['upper-cased', (body) => body.toUpperCase()],
  ['lower-cased', (body) => body.toLowerCase()],
  ['Base64 of the whole body', (body) => Buffer.from(`request: ${body}`).toString('base64')],
  ['HTML-escaped', (body) => [...decodeURIComponent(body)].map((c) => `&#${c.charCodeAt(0)};`).join('')],
  ['spaced out', (body) => [...decodeURIComponent(body)].join(' ')],
  ['hex', (body) => Buffer.from(decodeURIComponent(body)).toString('hex')],
  [
    '\\u escapes',
    (body) => [...decodeURIComponent(body)].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  ],
  // What a JSON document or a terminal shows as `\u0080` escapes between the characters (N24, again).
  ['interleaved with C1 characters', (body) => [...decodeURIComponent(body)].join('\u0080')],
  ['interleaved with zero-width spaces', (body) => [...decodeURIComponent(body)].join('\u200b')],
  ['reversed', (body) => [...decodeURIComponent(body)].reverse().join('')],
];

/** Every form of SECRET a reader could recover from what mmauth printed. */
function recoverable(printed: string): boolean {
  const lower = printed.toLowerCase();
  const secret = SECRET.toLowerCase();
  const forms = [
    lower,
    lower.replace(/\s+/g, ''),
    Buffer.from(printed.match(/[0-9a-f]{24,}/gi)?.join('') ?? '', 'hex')
      .toString('latin1')
      .toLowerCase(),
    ...(printed.match(/[A-Za-z0-9+/]{16,}={0,2}/g) ?? []).map((b) =>
      Buffer.from(b, 'base64').toString('latin1').toLowerCase(),
    ),
    lower.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))),
    lower.replace(/\\\\u([0-9a-f]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    // Whatever stands between the characters dropped: escapes as printed, and any character no secret holds.
    lower.replace(/\\+(u[0-9a-f]{4}|x[0-9a-f]{2})/g, '').replace(/[^a-z0-9-]/g, ''),
    [...lower].reverse().join(''),
  ];
  // The tail: mmauth's own words name `--client-secret-stdin`, which the stripped view would take for the head.
  return forms.some((form) => form.includes(secret.slice(-12)));
}

describe('N24: a server that echoes the request in disguise', () => {
  it.each(DISGUISES)('%s: the secret is in no printed line nor the --json error', async (_name, disguise) => {
    const server = await startHostileServer({
      'POST /oauth2/token': (_req, res) => {
        const body = server.requests.at(-1)?.body ?? '';
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request', error_description: `you sent ${disguise(body)}` }));
      },
    });
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir(), MMAUTH_BASE_URL: server.baseUrl, MMAUTH_CLIENT_ID: 'app' };
    for (const args of [['client-credentials'], ['client-credentials', '--json']]) {
      const result = await runCli([...args, '--client-secret-stdin'], { env, input: `${SECRET}\n` });
      expect(result.code).toBe(1);
      const printed = `${result.stdout}${result.stderr}`;
      expect(recoverable(printed), printed).toBe(false);
      expect(printed).toContain('invalid_request');
      // Scrubbed where its form is known ([redacted]), else the server's words withheld.
      expect(printed).toMatch(/withheld: it echoed a secret|invalid_request — you sent .*\[redacted\]/);
      if (args.includes('--json')) expect(() => JSON.parse(result.stdout)).not.toThrow();
    }
  });
});

describe("N25: the loopback's Sign-in failed page", () => {
  it('a token endpoint echoing the exchange: the page the browser shows holds neither the client secret nor the PKCE verifier', async () => {
    const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'mmauth-page-'));
    onTestFinished(() => rmSync(dir, REMOVE_TREE));
    const server = await startHostileServer({
      'GET /oauth2/authorize': (req, res) => {
        const query = new URL(req.url ?? '/', 'http://x').searchParams;
        const target = new URL(query.get('redirect_uri') ?? '');
        target.searchParams.set('code', 'a-code-of-the-server');
        target.searchParams.set('state', query.get('state') ?? '');
        res.writeHead(302, { location: target.href }).end();
      },
      'POST /oauth2/token': (_req, res) => {
        const body = decodeURIComponent(server.requests.at(-1)?.body ?? '');
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_grant', error_description: `you sent ${body}` }));
      },
    });
    const page = join(dir, 'page.html');
    const browser = join(dir, 'browser.cjs');
    writeFileSync(
      browser,
      `(async () => {
        const start = await fetch(process.argv[2], { redirect: 'manual' });
        const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0];
        const authorize = await fetch(start.headers.get('location'), { redirect: 'manual' });
        const callback = await fetch(authorize.headers.get('location'), { headers: { cookie } });
        // Written whole, then renamed: the test never reads half a page.
        const fs = require('node:fs');
        fs.writeFileSync(${JSON.stringify(page)} + '.part', await callback.text());
        fs.renameSync(${JSON.stringify(page)} + '.part', ${JSON.stringify(page)});
      })();`,
    );
    const env = {
      MMAUTH_CONFIG_DIR: makeConfigDir(),
      MMAUTH_BASE_URL: server.baseUrl,
      MMAUTH_CLIENT_ID: 'app',
      MMAUTH_CLIENT_SECRET: SECRET,
      BROWSER: `${process.execPath} ${browser}`,
    };
    const result = await runCli(['login', '--no-probe', '--wait', '10', '--scope', 'service'], { env });
    expect(result.code).toBe(4);
    // The browser is a process of its own: it may write the page a moment after mmauth has exited.
    const { existsSync } = await import('node:fs');
    for (let i = 0; i < 100 && !existsSync(page); i++) await new Promise((r) => setTimeout(r, 50));
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('Sign-in failed');
    const exchange = new URLSearchParams(server.requests.find((r) => r.url === '/oauth2/token')?.body);
    const verifier = exchange.get('code_verifier') ?? '';
    expect(verifier.length).toBeGreaterThan(40);
    for (const secret of [SECRET, verifier]) {
      expect(html).not.toContain(secret);
      expect(recoverable(html.replace(/&#39;/g, "'"))).toBe(false);
    }
  });
});
