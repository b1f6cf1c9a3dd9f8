import { request, type IncomingMessage } from 'node:http';
import { isMmauthError, MmauthError, type ErrorCode, ERROR_CODES } from '../errors.js';
import {
  parseAgentStatus,
  parseAgentToken,
  REFUSED_PATH,
  STATUS_PATH,
  TOKEN_PATH,
  type AgentStatus,
  type AgentToken,
} from './agent-protocol.js';

/** The most of an agent's answer read: a token answer is well under 1 KiB. */
const MAX_ANSWER_BYTES = 64 * 1024;

function unreachable(socketPath: string, why: string): MmauthError {
  return new MmauthError('agent_unreachable', `the token agent at ${socketPath} cannot be reached: ${why}`, {
    details: { socket: socketPath },
  });
}

/** The error an agent's error document names, with its code (a code this version does not know: `unexpected`). */
function agentError(json: unknown, status: number): MmauthError {
  const error = (typeof json === 'object' && json !== null ? (json as Record<string, unknown>).error : undefined) as
    Record<string, unknown> | undefined;
  const code = typeof error?.code === 'string' ? error.code : 'unexpected';
  const message = typeof error?.message === 'string' ? error.message : `the agent answered HTTP ${status}`;
  const known = (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'unexpected';
  return new MmauthError(known, `agent: ${message}`, {
    status,
    ...(typeof error?.oauth_error === 'string' ? { oauthError: error.oauth_error } : {}),
  });
}

/** One request to the agent on `socketPath`; resolves with the status and parsed JSON. Throws `agent_unreachable`. */
function ask(
  socketPath: string,
  method: 'GET' | 'POST',
  path: string,
  body: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method,
        path,
        // `agent` names no host: the socket is the address; a forwarded socket answers the same.
        headers: {
          host: 'agent',
          accept: 'application/json',
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
        timeout: timeoutMs,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error('answer too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          try {
            resolve({
              status: res.statusCode ?? 0,
              json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
            });
          } catch {
            reject(unreachable(socketPath, `it answered HTTP ${res.statusCode ?? 0} without a JSON document`));
          }
        });
        res.on('error', (error) => reject(unreachable(socketPath, error.message)));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'ENOENT'
          ? 'no such socket (is the agent running, and its socket forwarded here?)'
          : error.code === 'ECONNREFUSED'
            ? 'nothing listens there (the agent stopped)'
            : error.code === 'EACCES'
              ? 'permission denied'
              : error.message;
      reject(isMmauthError(error) ? error : unreachable(socketPath, why));
    });
    req.end(body);
  });
}

/** The token answer of `answer`, or the agent's error. */
function tokenOf(socketPath: string, answer: { status: number; json: unknown }): AgentToken {
  if (answer.status !== 200) throw agentError(answer.json, answer.status);
  const token = parseAgentToken(answer.json);
  if (token === undefined) throw unreachable(socketPath, 'its answer is not a token document of protocol v1');
  return token;
}

/**
 * A usable access token of `profile` (undefined: the agent's default profile) from the agent on
 * `socketPath` (`GET /v1/token`), valid for `minTtl` s at least. Throws `agent_unreachable` (no
 * socket, nothing listening, no answer within `timeoutMs`, not the protocol) or the agent's own
 * error with its code (`profile_not_served`, `not_logged_in`, `refresh_refused`, …).
 */
export async function tokenFromAgent(
  socketPath: string,
  profile: string | undefined,
  minTtl: number,
  timeoutMs: number,
): Promise<AgentToken> {
  const query = new URLSearchParams({ ...(profile === undefined ? {} : { profile }), min_ttl: String(minTtl) });
  return tokenOf(socketPath, await ask(socketPath, 'GET', `${TOKEN_PATH}?${query}`, undefined, timeoutMs));
}

/**
 * Tells the agent that the service refused `accessToken` of `profile` (a 401: `POST
 * /v1/token/refused`) and returns the token to use now: a renewed one, or the same one when the
 * agent finds the refusal was not about the token. Throws as tokenFromAgent.
 */
export async function refusedToAgent(
  socketPath: string,
  profile: string,
  accessToken: string,
  timeoutMs: number,
): Promise<AgentToken> {
  const body = JSON.stringify({ profile, access_token: accessToken });
  return tokenOf(socketPath, await ask(socketPath, 'POST', REFUSED_PATH, body, timeoutMs));
}

/** The agent's status (`GET /v1/status`). Throws `agent_unreachable`. */
export async function agentStatus(socketPath: string, timeoutMs: number): Promise<AgentStatus> {
  const answer = await ask(socketPath, 'GET', STATUS_PATH, undefined, timeoutMs);
  const status = answer.status === 200 ? parseAgentStatus(answer.json) : undefined;
  if (status === undefined) throw unreachable(socketPath, 'its answer is not a status document of protocol v1');
  return status;
}
