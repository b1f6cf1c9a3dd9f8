import type { IncomingMessage } from 'node:http';
import { decodeBasicCredentials } from '../util/basic-auth.js';
import { isSameSecret } from '../util/constant-time.js';
import type { EmulatorClient, EmulatorState } from './state.js';

/** Who the request says it is, and whether that was proven. */
export interface ClientAuthenticationResult {
  client: EmulatorClient | undefined;
  isAuthenticated: boolean;
}

/**
 * Client authentication (RFC 6749 §2.3.1; what servers of the family do): HTTP Basic wins over body
 * parameters; a public client (no secret) is authenticated by its `client_id` alone. As in
 * Doorkeeper 5.5 (`Credentials.from_basic` matches `/^Basic /`), the scheme is case-sensitive: a
 * lower-case `basic` is no Basic credential, and the body parameters are read instead.
 */
export function authenticateClient(
  req: IncomingMessage,
  form: URLSearchParams,
  state: EmulatorState,
): ClientAuthenticationResult {
  const header = req.headers.authorization;
  const basic = header?.startsWith('Basic ') === true ? decodeBasicCredentials(header) : undefined;
  const clientId = basic?.clientId ?? form.get('client_id') ?? undefined;
  const secret = basic?.clientSecret ?? form.get('client_secret') ?? undefined;
  const client = clientId === undefined ? undefined : state.clients.get(clientId);
  if (client === undefined) return { client: undefined, isAuthenticated: false };
  if (client.clientSecret === undefined) return { client, isAuthenticated: true };
  return { client, isAuthenticated: secret !== undefined && isSameSecret(client.clientSecret, secret) };
}
