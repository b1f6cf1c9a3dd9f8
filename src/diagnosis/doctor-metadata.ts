import type { Endpoints } from '../oauth/endpoints.js';
import { fetchServerMetadata, withMetadata, type ServerMetadata } from '../oauth/server-metadata.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';
import type { CachedServerMetadata } from '../store/profile.js';
import type { Check } from './doctor-checks.js';

const NAME = 'server metadata';

/** The endpoints a metadata document names, one phrase (RFC 8414 §2 names shortened). */
function describeEndpoints(endpoints: Endpoints): string {
  return `authorize ${endpoints.authorize.href}, token ${endpoints.token.href}, revoke ${endpoints.revoke.href}, introspect ${endpoints.introspect.href}`;
}

/** Whether the metadata offers device login (RFC 8628 §4), as a phrase for the metadata check. */
function deviceLogin(metadata: ServerMetadata): string {
  return metadata.deviceAuthorizationEndpoint === undefined
    ? '; no device login offered (RFC 8628)'
    : `; device login (RFC 8628) at ${metadata.deviceAuthorizationEndpoint}`;
}

/** What differs between the profile's copy of the metadata and the server's document now; [] when nothing. */
function differences(held: ServerMetadata | null, now: ServerMetadata | null): string[] {
  if (held === null && now === null) return [];
  if (held === null) return ['the server now serves metadata'];
  if (now === null) return ['the server no longer serves metadata'];
  const fields: (keyof ServerMetadata)[] = [
    'issuer',
    'authorizationEndpoint',
    'tokenEndpoint',
    'revocationEndpoint',
    'introspectionEndpoint',
    'isIssRequired',
  ];
  return fields.filter((field) => JSON.stringify(held[field]) !== JSON.stringify(now[field]));
}

/**
 * doctor's look at the server's metadata (RFC 8414): read it now; none (404) is fine and changes
 * nothing; present, the endpoints it names are shown and compared with the profile's copy (`held`,
 * of the same base URL) and with the paths under the base URL; RFC 9207's `iss` requirement is
 * said; `code_challenge_methods_supported` without S256 and a server still offering
 * `response_type=token` (RFC 9700 §2.1.2) are warnings; a document that cannot be read is a
 * warning. Returns the checks and the endpoints the later checks use. Never throws.
 */
export async function checkServerMetadata(
  server: ServerConfiguration,
  held: CachedServerMetadata | undefined,
): Promise<{ checks: Check[]; endpoints: Endpoints }> {
  const base = server.endpoints;
  let metadata: ServerMetadata | null;
  try {
    metadata = await fetchServerMetadata(server);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const fix = `check the server; mmauth uses ${held?.metadata ? 'the copy from the last login' : 'the endpoints under the base URL'} meanwhile`;
    return {
      checks: [{ name: NAME, status: 'warn', detail: why, fix }],
      endpoints: withMetadata(base, held?.metadata),
    };
  }
  const endpoints = withMetadata(base, metadata);
  const checks: Check[] = [];
  if (metadata === null) {
    checks.push({
      name: NAME,
      status: 'ok',
      detail: `none (404: a server before RFC 8414); endpoints under ${base.baseUrl}/oauth2/; device login (RFC 8628) only where the profile names its endpoint (login --device --device-authorization-url)`,
    });
  } else {
    const isDefault = describeEndpoints(endpoints) === describeEndpoints(base);
    const iss = metadata.isIssRequired
      ? '; every authorization response must carry iss (RFC 9207)'
      : '; iss not promised (RFC 9207 off)';
    checks.push({
      name: NAME,
      status: 'ok',
      detail: `${metadata.source} with issuer ${metadata.issuer}: ${describeEndpoints(endpoints)}${isDefault ? ' (the paths under the base URL)' : ' (not the paths under the base URL: these are used)'}${iss}${deviceLogin(metadata)}`,
    });
    if (metadata.codeChallengeMethods !== undefined && !metadata.codeChallengeMethods.includes('S256')) {
      checks.push({
        name: 'PKCE',
        status: 'warn',
        detail: `the metadata lists code_challenge_methods_supported ${JSON.stringify(metadata.codeChallengeMethods)}, without S256`,
        fix: "mmauth always sends S256 (RFC 7636 §4.2): ask the server's operators to enable it",
      });
    }
    if (metadata.responseTypes?.includes('token') === true) {
      checks.push({
        name: 'implicit flow',
        status: 'warn',
        detail: 'the server still offers response_type=token',
        fix: 'RFC 9700 §2.1.2: the implicit flow should not be used; mmauth uses it only with --implicit',
      });
    }
  }
  if (held !== undefined && held.baseUrl === base.baseUrl) {
    const changed = differences(held.metadata, metadata);
    if (changed.length > 0) {
      checks.push({
        name: 'stored metadata',
        status: 'warn',
        detail: `the profile's copy (read ${held.fetchedAt}) differs from the server's now: ${changed.join(', ')}`,
        fix: 'run `mmauth login` again to record what the server says now',
      });
    }
  }
  return { checks, endpoints };
}
