import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { deadlineSignal } from '../../../src/util/deadline.js';

describe('deadlineSignal', () => {
  it('aborts with a TimeoutError after its time, even with no other reference to it than its own', async () => {
    const { signal } = deadlineSignal(50);
    (globalThis as { gc?: () => void }).gc?.();
    await sleep(120);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('aborts with the reason of another signal that aborts first; clear() stops the timer', async () => {
    const other = new AbortController();
    const first = deadlineSignal(10_000, [other.signal, undefined]);
    other.abort(new Error('ctrl-c'));
    expect(first.signal.aborted).toBe(true);
    expect((first.signal.reason as Error).message).toBe('ctrl-c');
    const second = deadlineSignal(30);
    second.clear();
    await sleep(60);
    expect(second.signal.aborted).toBe(false);
  });
});
