import { PassThrough } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startCallbackServer } from '../../../src/loopback/callback-server.js';
import { waitForAuthorizationResponses } from '../../../src/signin/authorization-responses.js';
import { readPastedLines } from '../../../src/ui/paste.js';
import { failureOf, rejectedBy } from '../../support/failure.js';

async function setUp(options: { timeoutMs?: number; signal?: AbortSignal; withPaste?: boolean } = {}) {
  const listener = await startCallbackServer({ port: 0, path: '/callback' });
  onTestFinished(() => listener.close());
  const stdin = new PassThrough();
  const pasted = options.withPaste === true ? readPastedLines(stdin) : undefined;
  onTestFinished(() => pasted?.close());
  const refusals: string[] = [];
  const responses = waitForAuthorizationResponses({
    listener,
    redirectUri: listener.redirectUri,
    pasted,
    timeoutMs: options.timeoutMs ?? 5000,
    signal: options.signal ?? new AbortController().signal,
    onRefused: (reason) => refusals.push(reason),
  });
  return { listener, stdin, responses, refusals };
}

describe('waitForAuthorizationResponses: the listener and paste-back, merged', () => {
  it('takes a pasted redirect URL; lines that are no URL or not the redirect path are refused and skipped', async () => {
    const { listener, stdin, responses, refusals } = await setUp({ withPaste: true });
    stdin.write('not a url\n\n');
    stdin.write('http://127.0.0.1:1/elsewhere?code=x\n');
    stdin.write(`${listener.redirectUri}?code=pasted&state=s\n`);
    const incoming = await responses.next();
    expect(incoming.url.searchParams.get('code')).toBe('pasted');
    expect(refusals).toEqual([
      'what was pasted is not a URL; paste the full address the browser ended on',
      'the pasted URL is not the redirect URI (expected http://127.0.0.1:1/callback?…)'.replace(
        ':1/',
        `:${listener.port}/`,
      ),
    ]);
  });

  it('takes the listener’s response when stdin ends without a paste', async () => {
    const { listener, stdin, responses } = await setUp({ withPaste: true });
    stdin.end();
    const answered = fetch(`${listener.redirectUri}?code=from-browser`);
    const incoming = await responses.next();
    incoming.respond({ isSuccess: true, title: 'ok', detail: '' });
    expect(incoming.url.searchParams.get('code')).toBe('from-browser');
    expect((await answered).status).toBe(200);
  });

  it('rejects with callback_timeout (exit 3) after the bound, naming the redirect URI', async () => {
    const { listener, responses } = await setUp({ timeoutMs: 100 });
    const failure = failureOf(await rejectedBy(() => responses.next()));
    expect(failure).toEqual({
      code: 'callback_timeout',
      exitCode: 3,
      message: `no redirect arrived at ${listener.redirectUri} within 0 s`,
    });
  });

  it('rejects with interrupted (exit 130) on Ctrl-C', async () => {
    const controller = new AbortController();
    const { responses } = await setUp({ signal: controller.signal });
    const waiting = rejectedBy(() => responses.next());
    controller.abort();
    expect(failureOf(await waiting)).toMatchObject({ code: 'interrupted', exitCode: 130 });
  });
});
