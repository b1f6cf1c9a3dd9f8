import type * as oauth from 'oauth4webapi';
import type { HttpFetch, HttpResponse } from '../http/http-types.js';
import type { Endpoints } from './endpoints.js';

/** The authorization server a request goes to: its endpoints and the transport to reach them. */
export interface ServerConfiguration {
  endpoints: Endpoints;
  fetch: HttpFetch;
}

/** How the client authenticates at the token and revoke endpoints (RFC 6749 §2.3.1; spec §5.3). */
export interface ClientAuthentication {
  clientId: string;
  /** Undefined for a public client (RFC 6749 §2.1): `client_id` alone is sent. */
  clientSecret: string | undefined;
}

/** Loads oauth4webapi on first use, so that start-up imports nothing but commander. */
export function loadOAuth(): Promise<typeof oauth> {
  return import('oauth4webapi');
}

/**
 * The authorization server metadata oauth4webapi works from: the issuer the server's metadata names
 * (else the base URL), and RFC 9207's `iss` requirement when the metadata states it.
 */
export function authorizationServer(endpoints: Endpoints): oauth.AuthorizationServer {
  return {
    issuer: endpoints.issuer ?? endpoints.baseUrl,
    authorization_response_iss_parameter_supported: endpoints.isIssRequired === true,
    authorization_endpoint: endpoints.authorize.href,
    token_endpoint: endpoints.token.href,
    revocation_endpoint: endpoints.revoke.href,
  };
}

/** oauth4webapi's client and client authentication: the secret in the body, or none (public client). */
export function clientAuthFor(lib: typeof oauth, client: ClientAuthentication): [oauth.Client, oauth.ClientAuth] {
  const auth = client.clientSecret === undefined ? lib.None() : lib.ClientSecretPost(client.clientSecret);
  return [{ client_id: client.clientId }, auth];
}

/** Statuses whose Response must have a null body (Fetch standard). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The response as a Fetch `Response`, for oauth4webapi's `process…Response` functions. Building one
 * loads Node's internal fetch (about 20 ms), so only the paths that use oauth4webapi pay for it.
 */
function toFetchResponse(response: HttpResponse): Response {
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Request options for oauth4webapi (token endpoint requests, metadata discovery): mmauth's transport,
 * and plain http allowed only because resolveEndpoints already limited it to loopback hosts.
 */
export function requestOptions(
  lib: typeof oauth,
  server: ServerConfiguration,
): oauth.TokenEndpointRequestOptions & oauth.DiscoveryRequestOptions {
  return {
    [lib.customFetch]: async (url: string, init: oauth.CustomFetchOptions<string, unknown>) =>
      toFetchResponse(
        await server.fetch(url, {
          method: init.method,
          headers: init.headers,
          body: typeof init.body === 'string' || init.body instanceof URLSearchParams ? init.body : undefined,
          redirect: 'manual',
          signal: init.signal,
        }),
      ),
    [lib.allowInsecureRequests]: server.endpoints.token.protocol === 'http:',
  };
}
