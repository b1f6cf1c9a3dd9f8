import type { IncomingMessage } from 'node:http';
import type { AccessTokenRecord, EmulatorState } from './state.js';

/**
 * The live access token of an `Authorization: Bearer` request (RFC 6750 §2.1; the scheme in any
 * case), recorded as used (its first use retires the refresh token it replaced), or undefined.
 */
export function bearerRecord(req: IncomingMessage, state: EmulatorState): AccessTokenRecord | undefined {
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1] === undefined ? undefined : state.useToken(bearer[1]);
}
