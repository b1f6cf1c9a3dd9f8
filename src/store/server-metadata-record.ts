import type { ServerMetadata } from '../oauth/wire.js';
import type { CachedServerMetadata } from './profile.js';

/** A string, or undefined for anything else. */
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A list of strings, or undefined for anything else. */
const texts = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;

/**
 * The profile's `server_metadata` member as CachedServerMetadata; undefined when absent or not of
 * that shape (a cache: a damaged one is read again from the server, never a malformed profile).
 */
export function parseServerMetadata(json: unknown): CachedServerMetadata | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const record = json as Record<string, unknown>;
  const fetchedAt = text(record.fetched_at);
  const baseUrl = text(record.base_url);
  if (fetchedAt === undefined || baseUrl === undefined || Number.isNaN(Date.parse(fetchedAt))) return undefined;
  if (record.document === null) return { fetchedAt, baseUrl, metadata: null };
  if (typeof record.document !== 'object' || record.document === undefined) return undefined;
  const d = record.document as Record<string, unknown>;
  const issuer = text(d.issuer);
  const source = d.source === 'openid-configuration' ? 'openid-configuration' : 'oauth-authorization-server';
  if (issuer === undefined) return undefined;
  const metadata: ServerMetadata = {
    issuer,
    authorizationEndpoint: text(d.authorization_endpoint),
    tokenEndpoint: text(d.token_endpoint),
    revocationEndpoint: text(d.revocation_endpoint),
    introspectionEndpoint: text(d.introspection_endpoint),
    deviceAuthorizationEndpoint: text(d.device_authorization_endpoint),
    isIssRequired: d.authorization_response_iss_parameter_supported === true,
    codeChallengeMethods: texts(d.code_challenge_methods_supported),
    responseTypes: texts(d.response_types_supported),
    source,
  };
  return { fetchedAt, baseUrl, metadata };
}

/** CachedServerMetadata as the profile's `server_metadata` member (RFC 8414 names inside `document`). */
export function serverMetadataJson(cached: CachedServerMetadata): Record<string, unknown> {
  const m = cached.metadata;
  return {
    fetched_at: cached.fetchedAt,
    base_url: cached.baseUrl,
    document:
      m === null
        ? null
        : {
            issuer: m.issuer,
            authorization_endpoint: m.authorizationEndpoint,
            token_endpoint: m.tokenEndpoint,
            revocation_endpoint: m.revocationEndpoint,
            introspection_endpoint: m.introspectionEndpoint,
            device_authorization_endpoint: m.deviceAuthorizationEndpoint,
            authorization_response_iss_parameter_supported: m.isIssRequired,
            code_challenge_methods_supported: m.codeChallengeMethods,
            response_types_supported: m.responseTypes,
            source: m.source,
          },
  };
}
