import { chmodSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { MmauthError } from '../errors.js';
import { capConnections } from '../loopback/peer-check.js';
import { readCappedBody } from '../util/read-capped-body.js';
import {
  AGENT_PROTOCOL_VERSION,
  agentTokenJson,
  REFUSED_PATH,
  STATUS_PATH,
  STOP_PATH,
  TOKEN_PATH,
  type AgentStatus,
  type AgentToken,
} from './agent-protocol.js';

/** Where the agent's tokens come from: the profile's store, renewal and single flight, as every command's. */
export interface AgentTokens {
  /**
   * A usable token of `profile`, valid for `minTtl` s at least (renewed first when needed); with
   * `verify`, one token info accepts now (renewed when it refuses; `verified` set). Throws MmauthError.
   */
  get(profile: string, minTtl: number, verify?: boolean): Promise<AgentToken>;
  /** The token to use after the service refused `accessToken` (a 401): renewed, or the same. Throws MmauthError. */
  refused(profile: string, accessToken: string): Promise<AgentToken>;
  /** The served profiles with their base URLs, for `GET /v1/status`. */
  describe(): Promise<AgentStatus['profiles']>;
}

/** What one client request was, for `--verbose`: never a token. */
export interface AgentRequestLog {
  method: string;
  path: string;
  profile: string | undefined;
  /** `ok`, `renewed`, or the error code. */
  outcome: string;
}

/** Options of startAgentServer. */
export interface AgentServerOptions {
  /** The socket's path, in a private (0700) directory of this user's. */
  socketPath: string;
  /** The profiles served; nothing else crosses the socket. */
  profiles: readonly string[];
  /** The profile a request naming none gets. */
  defaultProfile: string;
  tokens: AgentTokens;
  /** An error as the command line's error document (`{"schema_version", "error": {code, message, hint, exit_code}}`) and its HTTP status. */
  errorDocument(error: unknown): { status: number; document: Record<string, unknown> };
  onRequest?: ((log: AgentRequestLog) => void) | undefined;
  /** Called once `POST /v1/stop` has been answered: the agent is to stop. */
  onStop?: (() => void) | undefined;
}

/** The most of a request body read (`POST /v1/token/refused` carries a profile name and a token). */
const MAX_BODY_BYTES = 16 * 1024;
/** How long a connection may stay idle, in ms: the same bound as the proxy's. */
const IDLE_TIMEOUT_MS = 5_000;
/** The longest --min-ttl a client may ask for, in s (a day). */
const MAX_MIN_TTL_S = 86_400;

function send(res: ServerResponse, status: number, document: Record<string, unknown>): void {
  const body = JSON.stringify(document);
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The parsed `POST /v1/token/refused` body, or undefined when it is not `{"profile", "access_token"}`. */
function refusedBody(bytes: Uint8Array): { profile: string; accessToken: string } | undefined {
  try {
    const json = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    return typeof json.profile === 'string' && typeof json.access_token === 'string'
      ? { profile: json.profile, accessToken: json.access_token }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Serves the agent's protocol (agent-protocol.ts) on a Unix socket (0600 in its 0700 directory):
 * `GET /v1/token`, `POST /v1/token/refused`, `GET /v1/status`, `POST /v1/stop` (answered, then
 * `onStop`). Only access tokens of the served
 * profiles cross it; a profile not served is `profile_not_served`; a browser's request (any
 * `Origin` or `Sec-Fetch-Site`: a socket forwarded to a TCP port) is refused with 403. At most 64
 * connections, each closed after 5 s idle. Resolves once it listens; throws the listen error.
 */
export async function startAgentServer(options: AgentServerOptions): Promise<{ close(): Promise<void> }> {
  const served = new Set(options.profiles);
  const lastServed = new Map<string, string>();
  const fail = (res: ServerResponse, error: unknown) => {
    const { status, document } = options.errorDocument(error);
    send(res, status, document);
    return document;
  };
  const answerToken = (res: ServerResponse, token: AgentToken) => {
    const isRenewed = lastServed.has(token.profile) && lastServed.get(token.profile) !== token.accessToken;
    lastServed.set(token.profile, token.accessToken);
    send(res, 200, agentTokenJson(token));
    return isRenewed ? 'renewed' : 'ok';
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<AgentRequestLog> => {
    const url = new URL(req.url ?? '/', 'http://agent');
    const log = { method: req.method ?? 'GET', path: url.pathname, profile: undefined as string | undefined };
    const outcomeOf = (document: Record<string, unknown>) =>
      String((document.error as Record<string, unknown> | undefined)?.code ?? 'error');
    if (req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined) {
      const refusal = new MmauthError('forbidden_origin', 'no web page may ask the agent for a token');
      return { ...log, outcome: outcomeOf(fail(res, refusal)) };
    }
    const route = `${log.method} ${url.pathname}`;
    if (route === `GET ${STATUS_PATH}`) {
      const profiles = await options.tokens.describe();
      send(res, 200, {
        schema_version: AGENT_PROTOCOL_VERSION,
        pid: process.pid,
        default_profile: options.defaultProfile,
        profiles: profiles.map((p) => ({ name: p.name, base_url: p.baseUrl ?? null })),
      });
      return { ...log, outcome: 'ok' };
    }
    if (route === `POST ${STOP_PATH}`) {
      // Stopped over the protocol, by whoever may open the socket: never by a signal to a pid a socket named.
      res.once('finish', () => options.onStop?.());
      send(res, 200, { schema_version: AGENT_PROTOCOL_VERSION, pid: process.pid, stopping: true });
      return { ...log, outcome: 'stopping' };
    }
    let request: { profile: string; run: () => Promise<AgentToken> } | undefined;
    if (route === `GET ${TOKEN_PATH}`) {
      const profile = url.searchParams.get('profile') || options.defaultProfile;
      const minTtl = Number(url.searchParams.get('min_ttl') ?? '0');
      if (!Number.isInteger(minTtl) || minTtl < 0 || minTtl > MAX_MIN_TTL_S) {
        const usage = new MmauthError('usage', `min_ttl must be a whole number of seconds from 0 to ${MAX_MIN_TTL_S}`);
        return { ...log, profile, outcome: outcomeOf(fail(res, usage)) };
      }
      const verify = url.searchParams.get('verify') === '1';
      request = { profile, run: () => options.tokens.get(profile, minTtl, verify) };
    } else if (route === `POST ${REFUSED_PATH}`) {
      const bytes = await readCappedBody(req, MAX_BODY_BYTES, () => req.destroy());
      const body = bytes === undefined ? undefined : refusedBody(bytes);
      if (body === undefined) {
        const usage = new MmauthError('usage', 'send {"profile": NAME, "access_token": TOKEN}');
        return { ...log, outcome: outcomeOf(fail(res, usage)) };
      }
      request = { profile: body.profile, run: () => options.tokens.refused(body.profile, body.accessToken) };
    }
    if (request === undefined) {
      const unknown = new MmauthError('usage', `${route} is not part of the agent's protocol v1`);
      return { ...log, outcome: outcomeOf(fail(res, unknown)) };
    }
    if (!served.has(request.profile)) {
      const refusal = new MmauthError(
        'profile_not_served',
        `this agent does not serve profile "${request.profile}" (it serves ${[...served].map((n) => `"${n}"`).join(', ')})`,
      );
      return { ...log, profile: request.profile, outcome: outcomeOf(fail(res, refusal)) };
    }
    try {
      return { ...log, profile: request.profile, outcome: answerToken(res, await request.run()) };
    } catch (error) {
      return { ...log, profile: request.profile, outcome: outcomeOf(fail(res, error)) };
    }
  };
  const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    void handle(req, res).then(
      (log) => options.onRequest?.(log),
      (error: unknown) => {
        if (!res.headersSent) fail(res, error);
        else res.destroy();
      },
    );
  });
  server.headersTimeout = IDLE_TIMEOUT_MS;
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => socket.setTimeout(60_000, () => socket.destroy()));
  capConnections(server, 64);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(options.socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
