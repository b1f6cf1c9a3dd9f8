import { MmauthError } from '../errors.js';

/** The four OAuth endpoints of the service (spec §4), as absolute URLs. */
export interface Endpoints {
  /** Base URL as given, without a trailing slash; also used as the issuer identifier. */
  baseUrl: string;
  authorize: URL;
  token: URL;
  tokenInfo: URL;
  revoke: URL;
  /** Token introspection (RFC 7662; Doorkeeper's, not in the spec): doctor proves a client secret there. */
  introspect: URL;
  /**
   * The device authorization endpoint (RFC 8628 §3.1), where the server offers the device grant: its
   * metadata's `device_authorization_endpoint`, or a profile's setting; undefined where it offers none.
   */
  deviceAuthorization?: URL | undefined;
  /** The issuer the server's metadata names (RFC 8414 §2); undefined without metadata (the base URL is used). */
  issuer?: string | undefined;
  /** The metadata says every authorization response carries `iss` (RFC 9207 §2.4): one without it is refused. */
  isIssRequired?: boolean | undefined;
}

/**
 * Whether `hostname` (as URL.hostname gives it) is a loopback host: 127.0.0.0/8, `[::1]` or
 * `localhost` (RFC 8252 §7.3; RFC 6761 §6.3 for `localhost`).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]' || host === '::1') {
    return true;
  }
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Parses and checks a base URL: it must be absolute `https://`, or `http://` to a loopback host
 * (spec §4 "Always use SSL"), with no query, fragment or credentials.
 * Returns the endpoints below it (`{base}/oauth2/authorize` …). Throws MmauthError `invalid_base_url` or `insecure_base_url`.
 */
export function resolveEndpoints(baseUrl: string): Endpoints {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new MmauthError('invalid_base_url', `the base URL "${baseUrl}" is not an absolute URL`, {
      details: { reason: 'not_absolute' },
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new MmauthError('invalid_base_url', `the base URL must use https, not ${url.protocol.replace(':', '')}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new MmauthError(
      'insecure_base_url',
      `refusing plain http to ${url.host}: the base URL must be https unless its host is loopback`,
      {
        details: { suggestion: `https://${url.host}${url.pathname === '/' ? '' : url.pathname}` },
      },
    );
  }
  // A bare `?` or `#` leaves search and hash empty but would still be glued before /oauth2/….
  if (url.username !== '' || url.password !== '' || /[?#]/.test(baseUrl)) {
    throw new MmauthError('invalid_base_url', 'the base URL must not carry credentials, a query or a fragment');
  }
  const base = url.href.replace(/\/+$/, '');
  return {
    baseUrl: base,
    authorize: new URL(`${base}/oauth2/authorize`),
    token: new URL(`${base}/oauth2/token`),
    tokenInfo: new URL(`${base}/oauth2/token/info`),
    revoke: new URL(`${base}/oauth2/revoke`),
    introspect: new URL(`${base}/oauth2/introspect`),
  };
}
