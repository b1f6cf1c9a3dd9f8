import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import { reasonNotToOpen } from '../browser/open-browser.js';
import { isMmauthError } from '../errors.js';
import { privateCaHint } from '../util/private-ca-hint.js';
import { proxySettings } from '../http/proxy-transport.js';
import { withoutUserinfo } from '../http/environment-secrets.js';
import { resolveEndpoints, type Endpoints } from '../oauth/endpoints.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';
import { formatDuration } from '../ui/format.js';

/** One check's verdict: ok, warn (works, but look), fail (something will not work), or skip (not used by this profile). */
export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  /** What to do about a warn or fail. */
  fix?: string;
}

/** A passed check. */
export const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
/** A check that passed with something to look at. */
export const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
/** A failed check and its fix. */
export const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });
/** A check this profile has no use for. */
export const skip = (name: string, detail: string): Check => ({ name, status: 'skip', detail });
/** An error's message. */
export const why = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The config directory and file: this user's, not writable by others, the file 0600 (README "Where the config lives"). */
export function checkConfigFiles(path: string): Check[] {
  const checks: Check[] = [];
  for (const [name, target, wanted] of [
    ['config directory', dirname(path), 0o700],
    ['config file', path, 0o600],
  ] as const) {
    let stats;
    try {
      stats = lstatSync(target);
    } catch {
      checks.push(ok(name, `${target} does not exist yet`));
      continue;
    }
    const mode = stats.mode & 0o777;
    const octal = mode.toString(8).padStart(4, '0');
    if (stats.isSymbolicLink())
      checks.push(fail(name, `${target} is a symbolic link`, 'replace the link by a file of your own'));
    else if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
      checks.push(
        fail(name, `${target} belongs to uid ${stats.uid}`, `chown it to this user, or set MMAUTH_CONFIG_DIR`),
      );
    } else if ((mode & ~wanted) !== 0) {
      checks.push(
        fail(
          name,
          `${target} has mode ${octal}, wider than ${wanted.toString(8).padStart(4, '0')}`,
          `chmod ${wanted.toString(8)} ${target}`,
        ),
      );
    } else checks.push(ok(name, `${target} (mode ${octal}, yours)`));
  }
  return checks;
}

/** The base URL: well formed, https unless loopback, and the proxy in force for its host. */
export function checkBaseUrl(
  baseUrl: string | undefined,
  env: NodeJS.ProcessEnv,
): { checks: Check[]; endpoints?: Endpoints } {
  if (baseUrl === undefined)
    return { checks: [fail('base URL', 'none set', 'pass --base-url https://host, set MMAUTH_BASE_URL, or log in')] };
  let endpoints: Endpoints;
  try {
    endpoints = resolveEndpoints(baseUrl);
  } catch (error) {
    return { checks: [fail('base URL', why(error), 'pass --base-url https://host')] };
  }
  const proxy = proxySettings(env);
  const via = endpoints.token.protocol === 'https:' ? proxy.httpsProxy : proxy.httpProxy;
  const host = endpoints.token.hostname;
  const isExempt = (proxy.noProxy ?? '').split(',').some((entry) => {
    const rule = entry.trim().replace(/^\*?\./, '');
    return rule !== '' && (rule === '*' || host === rule || host.endsWith(`.${rule}`));
  });
  // A proxy URL's userinfo (a password) is never printed.
  const shown = via === undefined ? undefined : withoutUserinfo(via);
  const proxyLine =
    shown === undefined
      ? 'no proxy'
      : isExempt
        ? `proxy ${shown} set, but NO_PROXY exempts ${host}`
        : `through the proxy ${shown}`;
  return { checks: [ok('base URL', `${endpoints.baseUrl} (${proxyLine})`)], endpoints };
}

/**
 * The token endpoint answers (an empty grant_type mints nothing: a JSON OAuth error is the sign of
 * life), and the clock agrees with its `Date` header within 60 s.
 */
export async function checkTokenEndpoint(server: ServerConfiguration, nowMs: number): Promise<Check[]> {
  let response;
  try {
    response = await server.fetch(server.endpoints.token.href, {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: new URLSearchParams({ grant_type: '' }),
      redirect: 'manual',
    });
  } catch (error) {
    const fix =
      isMmauthError(error) && error.code === 'tls_failure'
        ? error.details.reason === 'unknown_issuer'
          ? privateCaHint()
          : 'check the certificate (NODE_EXTRA_CA_CERTS for a private CA)'
        : 'check the base URL and that the server is running';
    return [fail('reachable', why(error), fix)];
  }
  const checks: Check[] = [];
  const isOAuthError =
    (response.status === 400 || response.status === 401) && /json/i.test(response.headers['content-type'] ?? '');
  checks.push(
    isOAuthError
      ? ok('token endpoint', `answers (HTTP ${response.status} to an empty grant_type, as it should)`)
      : fail(
          'token endpoint',
          `${server.endpoints.token.href} answered HTTP ${response.status} to an empty grant_type, not an OAuth error`,
          `check the base URL ${server.endpoints.baseUrl} and its path: the endpoints are under {base}/oauth2/ (--base-url or MMAUTH_BASE_URL)`,
        ),
  );
  const dateMs = Date.parse(response.headers.date ?? '');
  if (Number.isNaN(dateMs)) {
    checks.push(ok('clock', 'not compared: the server sent no Date header'));
  } else {
    const skewS = Math.round((nowMs - dateMs) / 1000);
    checks.push(
      Math.abs(skewS) > 60
        ? warn(
            'clock',
            `this machine's clock is ${formatDuration(Math.abs(skewS))} ${skewS > 0 ? 'ahead of' : 'behind'} the server's`,
            'sync the clock (NTP): token lifetimes are judged by it',
          )
        : ok('clock', `within ${Math.abs(skewS)} s of the server's`),
    );
  }
  return checks;
}

/** Where a browser would open, and why or why not (BROWSER, display, SSH, CI). */
export function checkBrowser(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Check {
  if (env.BROWSER?.trim()) return ok('browser', `BROWSER is set: ${env.BROWSER.trim().split(/\s+/)[0]}`);
  const reason = reasonNotToOpen(env, platform);
  return reason === undefined
    ? ok('browser', 'the system browser would open the sign-in page')
    : warn(
        'browser',
        `none would open: ${reason}`,
        '`mmauth login` prints the URL; use `mmauth login --start`, then `mmauth login --complete URL`, or paste the address back',
      );
}

/** Whether 127.0.0.1 can bind an ephemeral port (the login listener). */
export async function checkLoopback(): Promise<Check> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) =>
      resolve(
        fail(
          'loopback',
          `cannot listen on 127.0.0.1: ${why(error)}`,
          'use `mmauth login --start`, then `mmauth login --complete URL`',
        ),
      ),
    );
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(ok('loopback', `127.0.0.1 can listen (port ${port} was free)`)));
    });
  });
}
