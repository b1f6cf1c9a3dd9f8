import { DEFAULT_SCOPE, KNOWN_SCOPES } from '../oauth/wire.js';
import { redirectUriMatches } from './redirect-uri.js';
import { DESCRIPTIONS } from './responses.js';
import type { EmulatorClient, EmulatorState } from './state.js';

/** A valid authorization request (RFC 6749 §4.1.1, §4.2.1; RFC 7636 §4.3). */
export interface AuthorizationRequest {
  client: EmulatorClient;
  redirectUri: string;
  responseType: 'code' | 'token';
  scopes: string[];
  state: string | undefined;
  challenge: { value: string; method: 'S256' | 'plain' } | undefined;
}

/** A checked value, or the OAuth error it fails with. */
export type Checked<T> = { isValid: true; value: T } | { isValid: false; error: string; description?: string };

/** Parses a scope parameter: absent → `service`; commas or unknown scopes → undefined (invalid_scope). */
export function parseRequestedScopes(scope: string | null): string[] | undefined {
  if (scope === null || scope.trim() === '') return [DEFAULT_SCOPE];
  if (scope.includes(',')) return undefined;
  const scopes = [...new Set(scope.split(' ').filter(Boolean))];
  const known: readonly string[] = KNOWN_SCOPES;
  return scopes.every((s) => known.includes(s)) ? scopes : undefined;
}

/** Validates authorization request parameters in Doorkeeper's order (as servers of the family do). */
export function checkAuthorizationRequest(
  params: URLSearchParams,
  state: EmulatorState,
): Checked<AuthorizationRequest> {
  const client = state.clients.get(params.get('client_id') ?? '');
  if (client === undefined) return { isValid: false, error: 'invalid_client' };
  const redirectUri = params.get('redirect_uri');
  if (redirectUri === null || !client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
    return { isValid: false, error: 'invalid_redirect_uri' };
  }
  const responseType = params.get('response_type');
  if (responseType === null || responseType === '') {
    const description = `${DESCRIPTIONS.invalid_request} Missing required parameter: response_type.`;
    return { isValid: false, error: 'invalid_request', description };
  }
  if (responseType !== 'code' && responseType !== 'token')
    return { isValid: false, error: 'unsupported_response_type' };
  // Doorkeeper 5.5's grant flows: the implicit flow answers in the fragment (or form_post), never the query.
  const responseMode = params.get('response_mode');
  const modes = responseType === 'token' ? ['fragment', 'form_post'] : ['query', 'fragment', 'form_post'];
  if (responseMode !== null && responseMode !== '' && !modes.includes(responseMode)) {
    return { isValid: false, error: 'unsupported_response_mode' };
  }
  const scopes = parseRequestedScopes(params.get('scope'));
  if (scopes === undefined) return { isValid: false, error: 'invalid_scope' };
  const challengeValue = params.get('code_challenge');
  let challenge: AuthorizationRequest['challenge'];
  if (challengeValue !== null && challengeValue !== '') {
    const method = params.get('code_challenge_method');
    if (method !== 'S256' && method !== 'plain') return { isValid: false, error: 'invalid_code_challenge_method' };
    challenge = { value: challengeValue, method };
  }
  return {
    isValid: true,
    value: { client, redirectUri, responseType, scopes, state: params.get('state') ?? undefined, challenge },
  };
}

/** The fields a consent form carries back, so the POST can be validated like the GET. */
export function requestFields(params: URLSearchParams): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of [
    'client_id',
    'redirect_uri',
    'state',
    'response_type',
    'scope',
    'code_challenge',
    'code_challenge_method',
  ]) {
    const value = params.get(name);
    if (value !== null) fields[name] = value;
  }
  return fields;
}
