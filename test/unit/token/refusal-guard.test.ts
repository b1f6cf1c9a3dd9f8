import { describe, expect, it } from 'vitest';
import { REFUSAL_RECHECK_MS, refusalGuard } from '../../../src/token/refusal-guard.js';

function guarded(answers: Record<string, boolean | Error>) {
  let nowMs = 1_000_000;
  const asked: string[] = [];
  const guard = refusalGuard(
    async (token) => {
      asked.push(token);
      const answer = answers[token];
      if (answer instanceof Error) throw answer;
      return answer ?? false;
    },
    () => nowMs,
  );
  return { guard, asked, advance: (ms: number) => (nowMs += ms) };
}

describe('refusalGuard', () => {
  it('renews on the first refusal without asking anyone', async () => {
    const { guard, asked } = guarded({});
    expect(await guard.shouldRenew('a')).toBe(true);
    expect(asked).toEqual([]);
  });

  it('soon after a renewal, renews only a token that token info refuses; asks once per token', async () => {
    const { guard, asked } = guarded({ live: true, dead: false });
    guard.renewed();
    const answers = await Promise.all([
      guard.shouldRenew('live'),
      guard.shouldRenew('live'),
      guard.shouldRenew('live'),
    ]);
    expect(answers).toEqual([false, false, false]);
    expect(await guard.shouldRenew('dead')).toBe(true);
    expect(asked).toEqual(['live', 'dead']);
  });

  it('a question that fails renews nothing; after the window the first refusal renews again unasked', async () => {
    const { guard, asked, advance } = guarded({ flaky: new Error('connection_failed') });
    guard.renewed();
    expect(await guard.shouldRenew('flaky')).toBe(false);
    advance(REFUSAL_RECHECK_MS);
    expect(await guard.shouldRenew('flaky')).toBe(true);
    expect(asked).toEqual(['flaky']);
  });
});
