/**
 * Masks a secret for display: the first and last 4 characters of a token of 20 or more
 * characters, else only asterisks. `abcd…wxyz`.
 */
export function maskToken(token: string): string {
  return token.length >= 20 ? `${token.slice(0, 4)}…${token.slice(-4)}` : '*'.repeat(8);
}

/** A duration in whole seconds as `1h 59m`, `2d 3h`, `45s`: the largest unit and the next, if non-zero. */
export function formatDuration(totalSeconds: number): string {
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = Math.max(0, Math.round(totalSeconds));
  const counts = units.map(([name, size]) => {
    const count = Math.floor(rest / size);
    rest -= count * size;
    return { name, count };
  });
  const first = counts.findIndex((unit) => unit.count > 0);
  if (first === -1) {
    return '0s';
  }
  return counts
    .slice(first, first + 2)
    .filter((unit) => unit.count > 0)
    .map((unit) => `${unit.count}${unit.name}`)
    .join(' ');
}

/** An absolute time as ISO 8601 UTC without milliseconds: `2026-11-21T09:30:00Z`. */
export function formatInstant(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Remaining lifetime for people: `1h 59m (until 2026-11-21T09:30:00Z)`, or `no expiry`. */
export function describeLifetime(expiresInSeconds: number | null | undefined, nowMs: number): string {
  if (expiresInSeconds === null || expiresInSeconds === undefined) {
    return 'no expiry';
  }
  return `${formatDuration(expiresInSeconds)} (until ${formatInstant(nowMs + expiresInSeconds * 1000)})`;
}

/** `rows` as lines of columns as wide as their longest cell, two spaces apart (the last column unpadded). */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows.reduce((max, row) => row.map((cell, i) => Math.max(cell.length, max[i] ?? 0)), [] as number[]);
  return rows.map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
  );
}
