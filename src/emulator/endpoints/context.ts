import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorState } from '../state.js';

/** Which server the emulator imitates where the two differ (token info fields, revoke refusals). */
export type EmulatorFlavor = 'spec' | 'doorkeeper5';

/** What every endpoint handler gets: the state and the emulator's settings. */
export interface EndpointContext {
  state: EmulatorState;
  /** Skip sign-in and consent: approve every valid authorization request as the first user. */
  autoApprove: boolean;
  flavor: EmulatorFlavor;
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
