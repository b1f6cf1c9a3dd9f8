import { MmauthError } from '../errors.js';
import { oauthErrorFields } from './describe-error.js';
import type { ServerConfiguration } from './server-configuration.js';

/** What the authorization endpoint said to the request a browser is about to be sent with. */
export type ProbeOutcome = { kind: 'page' } | { kind: 'redirect'; location: string };

function htmlText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The reason on the server family's error page: Doorkeeper's `<pre>`, or the emulator's `#error` paragraph. */
function errorPageReason(html: string): { error: string | undefined; reason: string } | undefined {
  if (!/An error has occurred/i.test(html)) return undefined;
  const code = /data-error="([^"]*)"/.exec(html)?.[1];
  const body =
    /<pre[^>]*>([\s\S]*?)<\/pre>/i.exec(html)?.[1] ?? /<p id="error"[^>]*>([\s\S]*?)<\/p>/i.exec(html)?.[1] ?? '';
  return {
    error: code === undefined ? undefined : htmlText(code),
    reason: htmlText(body).slice(0, 300) || 'no reason given',
  };
}

/**
 * The reason a plain answer gives (a 4xx of a proxy or a framework in front of the server): the
 * `error` and `error_description` of a JSON body (RFC 6749 §5.2 shape), else the start of a
 * text/plain body, control and format characters removed, whitespace collapsed, at most 200
 * characters; undefined for any other body or an empty one.
 */
export function plainAnswerReason(text: string, contentType: string | undefined): string | undefined {
  if (/json/i.test(contentType ?? '')) {
    try {
      const fields = oauthErrorFields(JSON.parse(text));
      if (fields !== undefined) return `${fields.error}${fields.description ? ` — ${fields.description}` : ''}`;
    } catch {
      return undefined;
    }
  }
  if (!/^text\/plain\b/i.test(contentType ?? '')) return undefined;
  const line = text
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (line === '') return undefined;
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * Asks the authorization endpoint once, as the browser will (`GET` of the same URL, no cookies,
 * redirects not followed), before mmauth waits: the server family answers a bad request (unknown
 * client, unregistered redirect URI, unknown scope, unsupported response type) with an HTML error
 * page and never redirects it (as servers of the family do). Returns `page` (sign-in or consent)
 * or `redirect`; throws `authorization_request_rejected` with the server's reason for its error
 * page or a 4xx, `unexpected_status` for a 5xx, and network errors as the transport throws them.
 */
export async function probeAuthorizationEndpoint(server: ServerConfiguration, url: URL): Promise<ProbeOutcome> {
  const response = await server.fetch(url.href, {
    method: 'GET',
    headers: { accept: 'text/html' },
    redirect: 'manual',
  });
  if (response.status >= 300 && response.status < 400)
    return { kind: 'redirect', location: response.headers.location ?? '' };
  const text = new TextDecoder().decode(response.body);
  const page = errorPageReason(text);
  if (page !== undefined || (response.status >= 400 && response.status < 500)) {
    const plain = page === undefined ? plainAnswerReason(text, response.headers['content-type']) : undefined;
    const reason =
      page?.reason ?? (plain === undefined ? `HTTP ${response.status}` : `HTTP ${response.status}: ${plain}`);
    const what = page?.error === undefined ? '' : ` (${page.error})`;
    return Promise.reject(
      new MmauthError(
        'authorization_request_rejected',
        `the authorization endpoint rejected the request${what}: ${reason}`,
        {
          status: response.status,
          oauthError: page?.error,
          details: { reason },
        },
      ),
    );
  }
  if (response.status >= 500) {
    throw new MmauthError(
      'unexpected_status',
      `the authorization endpoint failed on the server side (HTTP ${response.status})`,
      {
        status: response.status,
      },
    );
  }
  return { kind: 'page' };
}
