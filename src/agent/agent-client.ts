import { isMmauthError, MmauthError } from '../errors.js';
import { agentError, failureOf, parseAnswer, unreachable } from './agent-answer.js';
import {
  parseAgentStatus,
  parseAgentToken,
  REFUSED_PATH,
  STATUS_PATH,
  STOP_PATH,
  TOKEN_PATH,
  type AgentStatus,
  type AgentToken,
} from './agent-protocol.js';
import { assertTrustedSocket } from './socket-trust.js';

/** The most of an agent's answer read: a token answer is well under 1 KiB. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A connection to an agent and who takes the bytes it reads now (no one while it is idle). */
interface AgentConnection {
  socket: import('node:net').Socket;
  onBytes: ((chunk: Buffer) => void) | undefined;
}

/** Connections to an agent kept open between requests, by socket path (unref'd: they never keep a process alive). */
const idle = new Map<string, AgentConnection[]>();

/** The most one read takes: a token answer is well under 1 KiB, a larger one takes several reads. */
const READ_BUFFER_BYTES = 16 * 1024;

/**
 * One request to the agent on `socketPath`, HTTP/1.1 over `node:net` (the agent always sends a
 * Content-Length; node:http would cost every `mmauth token` through the agent about 10 ms more to
 * load), on a kept connection when one is idle (a second request of a process costs no connect);
 * resolves with the status and parsed JSON. A kept connection the agent closed meanwhile is
 * replaced once. A new connection is made only to a trusted socket (assertTrustedSocket). Throws
 * `agent_unreachable`, `agent_untrusted`.
 */
async function ask(
  socketPath: string,
  method: 'GET' | 'POST',
  path: string,
  body: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; json: unknown }> {
  const { connect } = await import('node:net');
  const length =
    body === undefined ? '' : `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  // `agent` names no host: the socket is the address; a forwarded socket answers the same.
  const request = `${method} ${path} HTTP/1.1\r\nhost: agent\r\naccept: application/json\r\n${length}\r\n${body ?? ''}`;
  const once = (isReused: boolean, connection: AgentConnection) =>
    new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      const { socket } = connection;
      const chunks: Buffer[] = [];
      let size = 0;
      let isDone = false;
      const finish = (error: MmauthError | undefined, answer?: { status: number; json: unknown }) => {
        if (isDone) return;
        isDone = true;
        clearTimeout(timer);
        connection.onBytes = undefined;
        socket.removeAllListeners('end').removeAllListeners('error');
        if (error !== undefined) {
          socket.destroy();
          reject(error);
        } else if (answer !== undefined) {
          // Kept for the next request, silently closed when it errs meanwhile.
          socket.on('error', () => socket.destroy()).unref();
          idle.set(socketPath, [...(idle.get(socketPath) ?? []), connection]);
          resolve(answer);
        }
      };
      const timer = setTimeout(
        () => finish(unreachable(socketPath, `no answer within ${Math.round(timeoutMs / 1000)} s`)),
        timeoutMs,
      );
      socket.ref();
      connection.onBytes = (chunk) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) return finish(unreachable(socketPath, 'its answer is too large'));
        chunks.push(chunk);
        const answer = parseAnswer(Buffer.concat(chunks));
        if (answer === undefined) return;
        try {
          finish(undefined, { status: answer.status, json: JSON.parse(answer.body.toString('utf8')) as unknown });
        } catch {
          finish(unreachable(socketPath, `it answered HTTP ${answer.status} without a JSON document`));
        }
      };
      const closed = (why: string) =>
        finish(
          isReused && size === 0
            ? new MmauthError('unexpected', 'reused connection closed')
            : unreachable(socketPath, why),
        );
      socket.on('end', () => closed('it closed the connection without a whole answer'));
      socket.on('error', (error: NodeJS.ErrnoException) => closed(failureOf(error)));
      socket.write(request);
    });
  const kept = idle.get(socketPath)?.pop();
  if (kept !== undefined && !kept.socket.destroyed) {
    try {
      return await once(true, kept);
    } catch (error) {
      // Closed by the agent while idle (its 5 s limit): once more on a new connection.
      if (!(isMmauthError(error) && error.code === 'unexpected')) throw error;
    }
  }
  // Nothing, not even a token request, goes to a socket another user could have put there.
  // The location judged, not the path again: a link flipped after the check leads nowhere else.
  const trusted = assertTrustedSocket(socketPath);
  // Reads go straight to the request's handler (onread), not through a readable stream: about
  // 0.5 ms less of Node's first-use work in a process that asks once, as `mmauth token` does.
  const fresh: AgentConnection = {
    socket: connect({
      path: trusted,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
        callback: (bytes, buffer) => {
          // A copy: the buffer is read into again. Bytes while no request waits break the protocol.
          if (fresh.onBytes === undefined) fresh.socket.destroy();
          else fresh.onBytes(Buffer.from(buffer.subarray(0, bytes)));
          return true;
        },
      },
    }),
    onBytes: undefined,
  };
  await new Promise<void>((resolve, reject) => {
    fresh.socket.once('connect', () => resolve());
    fresh.socket.once('error', (error: NodeJS.ErrnoException) => reject(unreachable(socketPath, failureOf(error))));
  });
  return once(false, fresh);
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
 * `socketPath` (`GET /v1/token`), valid for `minTtl` s at least; with `verify`, one the agent has
 * just had token info accept (spec §4.3; renewed there when refused). Throws `agent_unreachable` (no
 * socket, nothing listening, no answer within `timeoutMs`, not the protocol), `agent_outdated` (asked
 * to verify, the agent did not say it did: an older mmauth), or the agent's own error with its code
 * (`profile_not_served`, `not_logged_in`, `refresh_refused`, …).
 */
export async function tokenFromAgent(
  socketPath: string,
  profile: string | undefined,
  minTtl: number,
  timeoutMs: number,
  verify = false,
): Promise<AgentToken> {
  const query = new URLSearchParams({
    ...(profile === undefined ? {} : { profile }),
    min_ttl: String(minTtl),
    ...(verify ? { verify: '1' } : {}),
  });
  const token = tokenOf(socketPath, await ask(socketPath, 'GET', `${TOKEN_PATH}?${query}`, undefined, timeoutMs));
  if (verify && token.verified !== true) {
    throw new MmauthError('agent_outdated', `the token agent at ${socketPath} does not check tokens with the server`, {
      details: { socket: socketPath },
    });
  }
  return token;
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

/**
 * Asks the agent on `socketPath` to stop (`POST /v1/stop`) and waits, at most `timeoutMs`, until
 * nothing answers there; resolves with the pid the agent gave (for the message only: no signal is
 * ever sent to it) and whether it was seen to stop. Throws `agent_unreachable`, `agent_untrusted`
 * (nothing sent), or the agent's error (an agent too old to know the request: `usage`).
 */
export async function stopAgent(socketPath: string, timeoutMs: number): Promise<{ pid: number; isStopped: boolean }> {
  const answer = await ask(socketPath, 'POST', STOP_PATH, '{}', timeoutMs);
  if (answer.status !== 200) throw agentError(answer.json, answer.status);
  const json = (typeof answer.json === 'object' && answer.json !== null ? answer.json : {}) as Record<string, unknown>;
  const pid = Number.isSafeInteger(json.pid) ? (json.pid as number) : 0;
  for (const { socket } of idle.get(socketPath) ?? []) socket.destroy();
  idle.delete(socketPath);
  // Stopped once no agent answers there (a forwarded socket may still accept, then close at once).
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const isAnswering = await ask(socketPath, 'GET', STATUS_PATH, undefined, 1_000).then(
      () => true,
      () => false,
    );
    for (const { socket } of idle.get(socketPath) ?? []) socket.destroy();
    idle.delete(socketPath);
    if (!isAnswering) return { pid, isStopped: true };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { pid, isStopped: false };
}
