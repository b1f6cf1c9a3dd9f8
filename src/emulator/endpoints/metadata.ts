import { KNOWN_SCOPES } from '../../oauth/wire.js';
import { sendJson, sendNotFound } from '../responses.js';
import type { EndpointHandler } from './context.js';

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414 §3), served in the `doorkeeper6` flavor
 * as Doorkeeper 6.0 builds it from its configuration (doorkeeper #1838): the issuer, the
 * authorization, token, revocation, introspection and device authorization (RFC 8628 §4) endpoints, the scopes, response types and
 * modes, grant types, client authentication methods and PKCE methods; with an `issuer` configured,
 * `authorization_response_iss_parameter_supported: true` (doorkeeper #1849, RFC 9207 §3). The
 * other flavors answer 404, as Doorkeeper 5 does.
 */
export const metadataEndpoint: EndpointHandler = ({ res }, { flavor, issuer }) => {
  if (flavor !== 'doorkeeper6' || issuer === undefined) {
    sendNotFound(res);
    return;
  }
  sendJson(res, 200, {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    device_authorization_endpoint: `${issuer}/oauth2/authorize_device`,
    scopes_supported: KNOWN_SCOPES,
    response_types_supported: ['code', 'token'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: [
      'authorization_code',
      'implicit',
      'client_credentials',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['plain', 'S256'],
    authorization_response_iss_parameter_supported: true,
  });
};
