import type { SecretScrubber } from './redact.js';

/** The proxy variables whose userinfo is a secret (HTTP_PROXY and friends, in either case). */
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'];

/**
 * Remembers the secrets the environment holds (the variables named in `secretVariables`, whose
 * values are secrets, and a proxy URL's password and whole userinfo), so that no message, hint,
 * JSON error or trace prints them.
 */
export function rememberEnvironmentSecrets(
  scrubber: SecretScrubber,
  env: NodeJS.ProcessEnv,
  secretVariables: readonly string[],
): void {
  for (const name of secretVariables) scrubber.remember(env[name]?.trim());
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (value === undefined || !value.includes('@')) continue;
    try {
      const url = new URL(value.includes('://') ? value : `http://${value}`);
      scrubber.remember(decodeURIComponent(url.password));
      scrubber.remember(url.password);
      if (url.username !== '' && url.password !== '') scrubber.remember(`${url.username}:${url.password}`);
    } catch {
      // Not a URL: the proxy layer reports it; there is nothing to remember.
    }
  }
}

/** `url` without its userinfo (`http://user:password@host` → `http://host`); anything else as given. */
export function withoutUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z\d+.-]*:\/\/)[^/@\s]*@/i, '$1');
}
