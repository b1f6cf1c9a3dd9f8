import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorState } from '../state.js';

/**
 * Which server the emulator imitates where they differ: the spec (token info fields, revoke
 * refusals), Doorkeeper 5, or Doorkeeper 6 (Doorkeeper 5's answers, plus RFC 8414 metadata and
 * RFC 9207's `iss` in authorization responses: doorkeeper #1838, #1849).
 */
export type EmulatorFlavor = 'spec' | 'doorkeeper5' | 'doorkeeper6';

/** Whether `flavor` answers as Doorkeeper does (token info fields, revoke refusals, introspection). */
export function isDoorkeeper(flavor: EmulatorFlavor): boolean {
  return flavor !== 'spec';
}

/** What every endpoint handler gets: the state and the emulator's settings. */
export interface EndpointContext {
  state: EmulatorState;
  /** Skip sign-in and consent: approve every valid authorization request as the first user. */
  autoApprove: boolean;
  flavor: EmulatorFlavor;
  /** The issuer (`doorkeeper6`): named by the metadata and sent as `iss` in authorization responses; undefined otherwise. */
  readonly issuer: string | undefined;
}

/** One request as an endpoint sees it: the parsed URL and the form body (empty for GET). */
export interface EndpointRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  form: URLSearchParams;
  /** The raw body as text (empty for a request without one). */
  body: string;
}

/** An endpoint: answers one request. */
export type EndpointHandler = (request: EndpointRequest, context: EndpointContext) => void;
