import { withoutUserinfo } from './environment-secrets.js';
import { MmauthError } from '../errors.js';

/** undici's own timeouts (connect, headers, body), reported like the overall AbortSignal timeout. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

/** Certificates signed by no CA Node trusts: what an intercepting proxy or a private CA looks like. */
const UNKNOWN_ISSUER_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
]);

/**
 * Turns whatever a transport threw for the request `label` into an MmauthError:
 * `request_timeout` (no complete answer within `timeoutMs`), `tls_failure`, or `connection_failed`
 * (refused, reset, host not found, …). `details.viaProxy` is "true" when `proxyUrl` carried it; a
 * failure to reach the proxy itself names the proxy.
 */
export function describeNetworkFailure(
  label: string,
  error: unknown,
  timeoutMs: number,
  proxyUrl?: string,
): MmauthError {
  const details = proxyUrl === undefined ? {} : { viaProxy: 'true' };
  if (error instanceof MmauthError) {
    return error;
  }
  const name = error instanceof Error ? error.name : '';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const causeMessage = cause instanceof Error ? cause.message : String(cause);
  // undici reports a proxy's refusal of the tunnel as an AbortError: it is an answer, not a timeout.
  const tunnel = /Proxy response \((\d{3})\) !== 200/.exec(error instanceof Error ? error.message : '');
  if (tunnel !== null) {
    const status = Number(tunnel[1]);
    const via = proxyUrl === undefined ? 'the proxy' : `the proxy ${withoutUserinfo(proxyUrl)}`;
    const what = status === 407 ? 'asks for authentication (HTTP 407)' : `refused the tunnel (HTTP ${status})`;
    return new MmauthError('connection_failed', `${label}: ${via} ${what}`, {
      cause: error,
      status,
      details: { ...details, reason: status === 407 ? 'proxy_auth' : 'proxy_refused' },
    });
  }
  if (name === 'TimeoutError' || name === 'AbortError' || TIMEOUT_CODES.has(code)) {
    return new MmauthError('request_timeout', `${label}: no complete answer within ${timeoutMs / 1000} s`, {
      cause: error,
      details,
    });
  }
  if (code.startsWith('HPE_')) {
    // Node's HTTP parser: an answer came, but it is not HTTP. The server's fault, not the network's.
    const message = `${label}: the answer is not valid HTTP (${code})`;
    return new MmauthError('malformed_response', message, { cause: error, details });
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(causeMessage)) {
    const message = `${label}: the server there does not speak TLS (its answer is not a TLS handshake; plain http?)`;
    return new MmauthError('tls_failure', message, { cause: error, details: { ...details, reason: 'not_tls' } });
  }
  if (TLS_CODES.has(code) || /certificate|TLS|SSL/i.test(cause instanceof Error ? cause.message : '')) {
    return new MmauthError(
      'tls_failure',
      `${label}: TLS failure (${code || (cause instanceof Error ? cause.message : 'unknown')})`,
      {
        cause: error,
        details: UNKNOWN_ISSUER_CODES.has(code) ? { ...details, reason: 'unknown_issuer' } : details,
      },
    );
  }
  if (proxyUrl !== undefined && isProxyItself(proxyUrl, cause)) {
    const what = code === 'ECONNREFUSED' ? 'refused the connection' : `failed (${code || causeMessage})`;
    return new MmauthError('connection_failed', `${label}: the proxy ${withoutUserinfo(proxyUrl)} ${what}`, {
      cause: error,
      details,
    });
  }
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    UND_ERR_SOCKET: 'connection reset',
    ENOTFOUND: 'host not found',
  };
  return new MmauthError('connection_failed', `${label}: ${known[code] ?? (code || causeMessage)}`, {
    cause: error,
    details,
  });
}

/** Whether a failed connection was to the proxy itself (its address and port), not to the server behind it. */
function isProxyItself(proxyUrl: string, cause: unknown): boolean {
  if (typeof cause !== 'object' || cause === null || !('port' in cause)) return false;
  try {
    const proxy = new URL(proxyUrl);
    const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
    return (
      Number(cause.port) === port &&
      (!('address' in cause) || String(cause.address) === proxy.hostname || proxy.hostname === 'localhost')
    );
  } catch {
    return false;
  }
}
