/**
 * The one path of an authenticated request (issue 32 item 3): a refusal renews once and replays
 * once, only when the request can be sent again; the token goes to the base URL's origin only.
 */
import { describe, expect, it } from 'vitest';
import { mayCarryToken, sendWithToken } from '../../../src/http/authenticated-request.js';

/** A service that refuses the tokens in `refused`, and a token holder that renews to t1, t2, … */
function fixture(refused: readonly string[]) {
  const sent: string[] = [];
  const renewedAfter: string[] = [];
  const discarded: number[] = [];
  let serial = 0;
  const send = (accessToken: string) => {
    sent.push(accessToken);
    return Promise.resolve({ status: refused.includes(accessToken) ? 401 : 200, serial: sent.length });
  };
  const tokens = {
    current: () => Promise.resolve('t0'),
    renewAfterRefusal: (accessToken: string) => {
      renewedAfter.push(accessToken);
      return Promise.resolve(`t${++serial}`);
    },
  };
  const rule = (canReplay: boolean) => ({
    isRefused: (answer: { status: number; serial: number }) => answer.status === 401,
    canReplay,
    discard: (answer: { status: number; serial: number }) => void discarded.push(answer.serial),
  });
  return { send, tokens, rule, sent, renewedAfter, discarded };
}

describe('sendWithToken', () => {
  it.each([
    { case: 'accepted: one request, no renewal', refused: [], canReplay: true, sent: ['t0'], renewed: [], status: 200 },
    {
      case: 'refused, replayable: one renewal, one replay',
      refused: ['t0'],
      canReplay: true,
      sent: ['t0', 't1'],
      renewed: ['t0'],
      status: 200,
    },
    {
      case: 'refused twice: the second answer is final',
      refused: ['t0', 't1'],
      canReplay: true,
      sent: ['t0', 't1'],
      renewed: ['t0'],
      status: 401,
    },
    {
      case: 'refused, a streamed body: no renewal, the 401 back',
      refused: ['t0'],
      canReplay: false,
      sent: ['t0'],
      renewed: [],
      status: 401,
    },
  ])('$case', async ({ refused, canReplay, sent, renewed, status }) => {
    const f = fixture(refused);
    const { answer, isRenewed } = await sendWithToken(f.send, f.tokens, f.rule(canReplay));
    expect(f.sent).toEqual(sent);
    expect(f.renewedAfter).toEqual(renewed);
    expect(answer.status).toBe(status);
    expect(isRenewed).toBe(renewed.length === 1);
    expect(f.discarded).toEqual(renewed.length === 1 ? [1] : []);
  });

  it('the holder gives back the refused token (the refusal was not about it): the 401 is the answer, sent once, not discarded', async () => {
    const f = fixture(['t0']);
    const tokens = { ...f.tokens, renewAfterRefusal: () => Promise.resolve('t0') };
    const { answer, isRenewed } = await sendWithToken(f.send, tokens, f.rule(true));
    expect(f.sent).toEqual(['t0']);
    expect(answer).toEqual({ status: 401, serial: 1 });
    expect(isRenewed).toBe(false);
    expect(f.discarded).toEqual([]);
  });

  it('a renewal that fails: the refusal is let go, the failure thrown', async () => {
    const f = fixture(['t0']);
    const tokens = { ...f.tokens, renewAfterRefusal: () => Promise.reject(new Error('refresh_refused')) };
    await expect(sendWithToken(f.send, tokens, f.rule(true))).rejects.toThrow('refresh_refused');
    expect(f.discarded).toEqual([1]);
  });
});

describe('mayCarryToken', () => {
  it.each([
    ['https://api.example.test/v1/maps', 'https://api.example.test/base', true],
    ['https://api.example.test:8443/maps', 'https://api.example.test/', false],
    ['http://api.example.test/maps', 'https://api.example.test/', false],
    ['https://evil.example.test/maps', 'https://api.example.test/', false],
    ['https://api.example.test/maps', undefined, false],
  ])('%s with base URL %s: %s', (url, baseUrl, expected) => {
    expect(mayCarryToken(new URL(url), baseUrl)).toBe(expected);
  });
});
