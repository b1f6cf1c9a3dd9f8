import { MmauthError } from '../errors.js';
import { resolveEndpoints, type Endpoints } from './endpoints.js';
import type { CachedServerMetadata, ServerMetadata } from './wire.js';

export type { ServerMetadata };
import { loadOAuth, requestOptions, type ServerConfiguration } from './server-configuration.js';

/** Statuses that say "no such document": a server that predates RFC 8414. */
const ABSENT_STATUSES = new Set([404, 410]);

/** `value` as a list of strings, or undefined when it is not one. */
function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

/**
 * An endpoint of the document, checked: absent is undefined; present, it must be on the base URL's
 * origin (credentials go only there), else `malformed_response`.
 */
function endpointOf(json: Record<string, unknown>, name: string, origin: string): string | undefined {
  const value = json[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !URL.canParse(value) || new URL(value).origin !== origin) {
    throw new MmauthError(
      'malformed_response',
      `the server's metadata names a ${name.replace(/_/g, ' ')} off ${origin}: mmauth sends credentials only to the base URL's origin`,
    );
  }
  return value;
}

/**
 * Reads the authorization server metadata of the server at `server.endpoints.baseUrl`: first
 * `/.well-known/oauth-authorization-server` inserted before the base URL's path (RFC 8414 §3),
 * then `{base}/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4), each validated
 * by oauth4webapi (a 200 JSON object whose `issuer` is the base URL: RFC 8414 §3.3). Returns null
 * when both answer 404 or 410: a server that predates metadata, for which nothing changes. Throws
 * `malformed_response` (an issuer that is not the base URL, an endpoint off its origin, not JSON),
 * `unexpected_status`, and network errors.
 */
export async function fetchServerMetadata(server: ServerConfiguration): Promise<ServerMetadata | null> {
  const lib = await loadOAuth();
  const issuer = new URL(server.endpoints.baseUrl);
  // The same transport and loopback allowance as every other request.
  const options = requestOptions(lib, server);
  for (const algorithm of ['oauth2', 'oidc'] as const) {
    const response = await lib.discoveryRequest(issuer, { ...options, algorithm });
    if (ABSENT_STATUSES.has(response.status)) continue;
    if (response.status !== 200) {
      throw new MmauthError('unexpected_status', `the server's metadata answered HTTP ${response.status}`, {
        status: response.status,
      });
    }
    let json: Record<string, unknown>;
    try {
      json = (await lib.processDiscoveryResponse(issuer, response)) as Record<string, unknown>;
    } catch (error) {
      const why = error instanceof Error ? error.message.replace(/^"response" /, '') : String(error);
      throw new MmauthError('malformed_response', `the server's metadata was refused: ${why}`, { cause: error });
    }
    const origin = issuer.origin;
    return {
      issuer: String(json.issuer),
      authorizationEndpoint: endpointOf(json, 'authorization_endpoint', origin),
      tokenEndpoint: endpointOf(json, 'token_endpoint', origin),
      revocationEndpoint: endpointOf(json, 'revocation_endpoint', origin),
      introspectionEndpoint: endpointOf(json, 'introspection_endpoint', origin),
      deviceAuthorizationEndpoint: endpointOf(json, 'device_authorization_endpoint', origin),
      isIssRequired: json.authorization_response_iss_parameter_supported === true,
      codeChallengeMethods: stringList(json.code_challenge_methods_supported),
      responseTypes: stringList(json.response_types_supported),
      source: algorithm === 'oauth2' ? 'oauth-authorization-server' : 'openid-configuration',
    };
  }
  return null;
}

/**
 * `endpoints` as the server's metadata names them (RFC 8414 §2): its authorization, token,
 * revocation and introspection endpoints where it lists them, its issuer, and whether `iss` is
 * required. Token info stays `{base}/oauth2/token/info` (Doorkeeper's own, in no metadata).
 * Without metadata, `endpoints` as they are. Throws `store_malformed` for an endpoint off the base
 * URL's origin (a copy planted in the config file: credentials go only to that origin).
 */
/**
 * The first endpoint `metadata` names off `origin` (a URL string), or undefined when all are on it:
 * what a stored copy is checked for before use, as fetchServerMetadata checks a fetched one.
 */
export function endpointOffOrigin(metadata: ServerMetadata, origin: string): string | undefined {
  const named = [
    metadata.authorizationEndpoint,
    metadata.tokenEndpoint,
    metadata.revocationEndpoint,
    metadata.introspectionEndpoint,
    metadata.deviceAuthorizationEndpoint,
  ];
  return named.find((given) => given !== undefined && (!URL.canParse(given) || new URL(given).origin !== origin));
}

/**
 * `endpoints` as the server's metadata (RFC 8414 §2; or null/undefined: none, `endpoints` as given)
 * names them: authorization, token, revocation and introspection endpoints, the issuer, and whether
 * the server promises `iss` (RFC 9207 §3). A copy read from the config file skipped
 * fetchServerMetadata's origin check, so every endpoint is checked here, where it is used. Throws
 * `store_malformed` when one names another origin than `endpoints.baseUrl`'s.
 */
export function withMetadata(endpoints: Endpoints, metadata: ServerMetadata | null | undefined): Endpoints {
  if (metadata === null || metadata === undefined) return endpoints;
  const origin = new URL(endpoints.baseUrl).origin;
  const foreign = endpointOffOrigin(metadata, origin);
  if (foreign !== undefined) {
    throw new MmauthError(
      'store_malformed',
      `the stored server metadata names an endpoint off ${origin} (${foreign}): mmauth sends credentials only to the base URL's origin`,
    );
  }
  const pick = (given: string | undefined, fallback: URL) => (given === undefined ? fallback : new URL(given));
  return {
    ...endpoints,
    authorize: pick(metadata.authorizationEndpoint, endpoints.authorize),
    token: pick(metadata.tokenEndpoint, endpoints.token),
    revoke: pick(metadata.revocationEndpoint, endpoints.revoke),
    introspect: pick(metadata.introspectionEndpoint, endpoints.introspect),
    deviceAuthorization:
      metadata.deviceAuthorizationEndpoint === undefined
        ? endpoints.deviceAuthorization
        : new URL(metadata.deviceAuthorizationEndpoint),
    issuer: metadata.issuer,
    isIssRequired: metadata.isIssRequired,
  };
}

/**
 * The endpoints of the server at `baseUrl` (resolveEndpoints: https unless loopback), as the server
 * metadata a profile holds names them (withMetadata) when that copy is of this base URL; as the
 * paths under the base URL otherwise. No request. Throws what resolveEndpoints throws.
 */
export function endpointsFor(baseUrl: string, cached: CachedServerMetadata | undefined): Endpoints {
  const endpoints = resolveEndpoints(baseUrl);
  return cached?.baseUrl === endpoints.baseUrl ? withMetadata(endpoints, cached.metadata) : endpoints;
}
