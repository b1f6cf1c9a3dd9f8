import type * as oauth from 'oauth4webapi';
import type { HttpAnswer, HttpFetch } from '../http/http-client.js';
import type { Endpoints } from './endpoints.js';

/** The server side of a request: its endpoints and the transport to reach them. */
export interface OAuthPeer {
  endpoints: Endpoints;
  fetch: HttpFetch;
}

/** A registered client (spec §1: registration yields client_id and client_secret). */
export interface ClientCredentials {
  clientId: string;
  /** Undefined for a public client (implicit flow, personal access tokens). */
  clientSecret: string | undefined;
}

/** Loads oauth4webapi on first use, so that start-up imports nothing but commander. */
export function loadOAuth(): Promise<typeof oauth> {
  return import('oauth4webapi');
}

/** The authorization server metadata oauth4webapi works from; the issuer is the base URL. */
export function authorizationServer(endpoints: Endpoints): oauth.AuthorizationServer {
  return {
    issuer: endpoints.baseUrl,
    authorization_endpoint: endpoints.authorize.href,
    token_endpoint: endpoints.token.href,
    revocation_endpoint: endpoints.revoke.href,
  };
}

/** Statuses whose Response must have a null body (Fetch standard). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The answer as a Fetch `Response`, for oauth4webapi's `process…Response` functions. Building one
 * loads Node's internal fetch (about 20 ms), so only the paths that use oauth4webapi pay for it.
 */
function toResponse(answer: HttpAnswer): Response {
  return new Response(NULL_BODY_STATUSES.has(answer.status) ? null : answer.body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers,
  });
}

/**
 * Request options for oauth4webapi: mmauth's transport, and plain http allowed only because
 * resolveEndpoints already limited it to loopback hosts.
 */
export function requestOptions(lib: typeof oauth, peer: OAuthPeer): oauth.TokenEndpointRequestOptions {
  return {
    [lib.customFetch]: async (url: string, init: oauth.CustomFetchOptions<string, unknown>) =>
      toResponse(
        await peer.fetch(url, {
          method: init.method,
          headers: init.headers,
          body: typeof init.body === 'string' || init.body instanceof URLSearchParams ? init.body : undefined,
          redirect: 'manual',
          signal: init.signal,
        }),
      ),
    [lib.allowInsecureRequests]: peer.endpoints.token.protocol === 'http:',
  };
}
