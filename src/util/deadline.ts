/**
 * A signal that aborts with a `TimeoutError` after `ms`, or when any of `also` aborts. Unlike
 * `AbortSignal.any([AbortSignal.timeout(ms), …])`, whose timeout signal is held only weakly and can
 * be garbage-collected before it fires (the wait then never ends), the timer here is held by the
 * timer list. It does not keep the process alive; `clear()` stops it.
 */
export function deadlineSignal(
  ms: number,
  also: ReadonlyArray<AbortSignal | undefined> = [],
): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')), ms);
  timer.unref();
  const onAbort = (event: Event) => {
    const source = event.target as AbortSignal;
    controller.abort(source.reason);
  };
  for (const signal of also) {
    if (signal === undefined) continue;
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      for (const signal of also) signal?.removeEventListener('abort', onAbort);
    },
  };
}
