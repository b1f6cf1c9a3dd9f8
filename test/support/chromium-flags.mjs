/**
 * How the browser tests start Debian's Chromium, shared by the BROWSER driver (plain JavaScript)
 * and the test files: the executable .ci/run installs, and the flags this machine's closed network
 * needs (without the background-networking ones Chromium's own connections are refused).
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
