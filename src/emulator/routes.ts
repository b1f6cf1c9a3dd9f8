import type { IncomingMessage, ServerResponse } from 'node:http';
import { readCappedBody } from '../util/read-capped-body.js';
import { authorizeGet, authorizePost, signIn } from './endpoints/authorize.js';
import type { EmulatorFlavor, EndpointContext, EndpointHandler } from './endpoints/context.js';
import { apiEcho, apiMe } from './endpoints/api.js';
import { introspectEndpoint } from './endpoints/introspect.js';
import { metadataEndpoint } from './endpoints/metadata.js';
import { deviceAuthorizationEndpoint, devicePageGet, devicePagePost } from './endpoints/device.js';
import { revokeEndpoint } from './endpoints/revoke.js';
import { tokenInfoEndpoint } from './endpoints/token-info.js';
import { tokenEndpoint } from './endpoints/token.js';
import { sendNotFound } from './responses.js';
import type { EmulatorState } from './state.js';

export type { EmulatorFlavor } from './endpoints/context.js';

/** A request as the emulator received it, for tests that check what a client sent. */
export interface ObservedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body (form bodies of token and revoke requests). */
  body: string;
}

/** What the request handler needs. */
export interface HandlerOptions {
  state: EmulatorState;
  autoApprove: boolean;
  flavor: EmulatorFlavor;
  onRequest: ((request: ObservedRequest) => void) | undefined;
  /** The issuer of the `doorkeeper6` flavor (known once the server listens); undefined for the others. */
  issuer?: () => string | undefined;
  /** The Host header values it answers (its own address by IP literal and `localhost`); any other gets 400. */
  allowedHosts?: () => ReadonlySet<string>;
}

/**
 * A request body's parameters: a form (RFC 6749 §4.1.3), or a JSON object's string, number and
 * boolean members, as Rails' params parser gives them to Doorkeeper (a JSON body at the token
 * endpoint is accepted there). Anything else parses as a form.
 */
function parseParameters(contentType: string | undefined, text: string): URLSearchParams {
  if (!/^application\/json\b/i.test(contentType ?? '')) return new URLSearchParams(text);
  const params = new URLSearchParams();
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return params;
    for (const [key, value] of Object.entries(json)) {
      if (['string', 'number', 'boolean'].includes(typeof value)) params.set(key, String(value));
    }
  } catch {
    // Rails answers 400 to a body it cannot parse; no parameters reads the same at the endpoints.
  }
  return params;
}

/** The route table: `METHOD path` → endpoint (spec §4, plus the sign-in form). */
const ROUTES: Readonly<Record<string, EndpointHandler>> = {
  'GET /.well-known/oauth-authorization-server': metadataEndpoint,
  'GET /oauth2/authorize': authorizeGet,
  'POST /oauth2/authorize': authorizePost,
  'POST /oauth2/sign_in': signIn,
  'POST /oauth2/token': tokenEndpoint,
  'POST /oauth2/authorize_device': deviceAuthorizationEndpoint,
  'GET /oauth2/device': devicePageGet,
  'POST /oauth2/device': devicePagePost,
  'GET /oauth2/token/info': tokenInfoEndpoint,
  'POST /oauth2/revoke': revokeEndpoint,
  'POST /oauth2/introspect': introspectEndpoint,
  'GET /api/me': apiMe,
  'GET /api/echo': apiEcho,
  'POST /api/echo': apiEcho,
  'PUT /api/echo': apiEcho,
  'PATCH /api/echo': apiEcho,
  'DELETE /api/echo': apiEcho,
};

const MAX_BODY_BYTES = 64 * 1024;

/**
 * Creates the emulator's request handler: refuses a foreign Host (400: no DNS rebinding), reads a
 * POST body (64 KiB at most, else 413), routes by method and path (404 otherwise, as Doorkeeper),
 * and answers 400 to a request it cannot parse or an endpoint that throws: one bad request never
 * stops the emulator.
 */
export function createRequestHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const context: EndpointContext = {
    state: options.state,
    autoApprove: options.autoApprove,
    flavor: options.flavor,
    get issuer() {
      return options.issuer?.();
    },
  };
  const badRequest = (res: ServerResponse) => {
    if (!res.headersSent) res.writeHead(400).end();
  };
  return (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://emulator.invalid');
    } catch {
      badRequest(res);
      return;
    }
    // No DNS rebinding: a page on another site that resolves its name to 127.0.0.1 sends its own Host.
    if (options.allowedHosts !== undefined && !options.allowedHosts().has((req.headers.host ?? '').toLowerCase())) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('unexpected Host header');
      return;
    }
    const method = req.method ?? 'GET';
    const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
    const body = hasBody ? readCappedBody(req, MAX_BODY_BYTES) : Promise.resolve(new Uint8Array());
    void body.then(
      (bytes) => {
        const text = bytes === undefined ? '' : Buffer.from(bytes).toString('utf8');
        options.onRequest?.({ method, url: req.url ?? '/', headers: req.headers, body: text });
        if (bytes === undefined) {
          res.writeHead(413, { 'content-type': 'text/plain' }).end('request body too large');
          return;
        }
        const handler = ROUTES[`${method} ${url.pathname}`];
        if (handler === undefined) return sendNotFound(res);
        try {
          handler({ req, res, url, form: parseParameters(req.headers['content-type'], text), body: text }, context);
        } catch {
          badRequest(res);
        }
      },
      () => badRequest(res),
    );
  };
}
