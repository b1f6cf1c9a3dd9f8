import type { IncomingMessage, ServerResponse } from 'node:http';
import { readCappedBody } from '../util/read-capped-body.js';
import { relayContentSecurityPolicy, renderRelayPage, type CallbackPage } from './pages.js';

/** Largest fragment the relay page may post, in bytes. */
const MAX_FRAGMENT_BYTES = 16 * 1024;

/**
 * Serves the implicit flow's relay page (RFC 6749 §4.2.2: the fragment never reaches a server, so
 * a page at the redirect URI posts `location.hash` back to the listener). `headers` are the page
 * headers; the page's one script is allowed by its hash.
 */
export function serveRelayPage(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, { ...headers, 'content-security-policy': relayContentSecurityPolicy() });
  res.end(renderRelayPage());
}

/** Answers the relay page's POST with the verdict as JSON (the page shows it). */
export function respondRelayJson(res: ServerResponse, status: number, page: CallbackPage): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
  res.end(JSON.stringify({ result: page.isSuccess ? 'success' : 'error', title: page.title, detail: page.detail }));
}

/**
 * Reads the relay page's POST: only from `allowedOrigins` (the listener's own), a form-encoded
 * fragment of at most 16 KiB. Returns the fragment, or undefined after answering 403/413 itself.
 */
export async function readRelayedFragment(
  req: IncomingMessage,
  res: ServerResponse,
  allowedOrigins: ReadonlySet<string>,
): Promise<string | undefined> {
  if (!allowedOrigins.has((req.headers.origin ?? '').toLowerCase())) {
    respondRelayJson(res, 403, {
      isSuccess: false,
      title: 'Refused',
      detail: 'Only the relay page of this listener may post here.',
    });
    req.resume();
    return undefined;
  }
  const fragment = await readCappedBody(req, MAX_FRAGMENT_BYTES).catch(() => undefined);
  if (fragment === undefined) {
    respondRelayJson(res, 413, { isSuccess: false, title: 'Refused', detail: 'The fragment is too large.' });
    return undefined;
  }
  return Buffer.from(fragment).toString('utf8');
}
