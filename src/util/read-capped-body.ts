/**
 * Reads a byte stream whole, at most `maxBytes`: undefined when it is longer (the rest is not
 * buffered; `onOverflow` may destroy the source). The one capped reader of HTTP answers, listener
 * and emulator requests, and stdin.
 */
export async function readCappedBody(
  source: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
  onOverflow?: () => void,
): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.byteLength;
    if (size > maxBytes) {
      onOverflow?.();
      return undefined;
    }
    chunks.push(bytes);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}
