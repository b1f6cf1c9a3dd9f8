/**
 * Which Chromium the browser tests start, shared by the BROWSER driver (plain JavaScript) and the
 * test files, and the flags this machine's closed network needs (without the background-networking
 * ones Chromium's own connections are refused).
 *
 * CHROMIUM_FOR_TESTS chooses: a path to a Chromium or Chrome executable, or `npm` for the one
 * inside @sparticuz/chromium (a devDependency). Unset: a system Chromium when there is one
 * (/usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome), else the npm one, so
 * that `npm ci && npm test` runs the browser suite on a machine with nothing else installed.
 */
import { existsSync } from 'node:fs';

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

async function npmChromium() {
  const { default: chromium } = await import('@sparticuz/chromium');
  // Unpacks the brotli-compressed binary into the temporary directory once (about 1.4 s), then reuses it.
  return chromium.executablePath();
}

async function resolveChromium() {
  const chosen = process.env.CHROMIUM_FOR_TESTS;
  if (chosen === 'npm') return npmChromium();
  if (chosen !== undefined && chosen !== '') return chosen;
  return SYSTEM_CHROMIUMS.find((path) => existsSync(path)) ?? npmChromium();
}

export const CHROMIUM_PATH = await resolveChromium();
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
