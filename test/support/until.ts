/**
 * Polls `check` every `everyMs` until it holds; rejects after `boundMs` with an error naming `what`.
 * Every wait of the suite has a bound, and counts what must hold, never how long it usually takes.
 */
export async function until(
  check: () => boolean,
  boundMs: number,
  what = 'the condition',
  everyMs = 50,
): Promise<void> {
  const endMs = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > endMs) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
