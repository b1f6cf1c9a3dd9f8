import { MmauthError } from '../errors.js';
import { isSameSecret } from '../util/constant-time.js';
import type { Endpoints } from './endpoints.js';

/**
 * For a server whose metadata names its issuer: `state` first (constant time: until it matches the
 * response is anyone's, `state_mismatch`), then RFC 9207 §2.4: no `iss` where the metadata says
 * every response carries one is `iss_missing`, an `iss` other than the issuer `iss_mismatch`.
 */
export function checkIssuer(endpoints: Endpoints, parameters: URLSearchParams, expectedState: string): void {
  const state = parameters.get('state');
  if (state === null || !isSameSecret(state, expectedState)) {
    throw new MmauthError(
      'state_mismatch',
      `callback rejected: ${state === null ? 'missing "state"' : 'unexpected "state" value'}`,
    );
  }
  const iss = parameters.get('iss');
  const issuer = endpoints.issuer ?? endpoints.baseUrl;
  if (iss === null && endpoints.isIssRequired === true) {
    throw new MmauthError(
      'iss_missing',
      `callback rejected: no "iss" in the authorization response, and ${issuer} says it always sends one (RFC 9207): a mix-up or a stripped response`,
    );
  }
  if (iss !== null && iss !== issuer) {
    throw new MmauthError(
      'iss_mismatch',
      `callback rejected: "iss" names another server, expected ${issuer} (RFC 9207)`,
    );
  }
}
