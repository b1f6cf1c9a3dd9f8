/**
 * Milliseconds on a monotonic clock (fractional), for durations only. process.hrtime, not
 * `performance.now()`: Node 20 loads perf_hooks on the first touch of the global `performance`,
 * about 1 ms that a one-request command pays.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
