/** The agent client's reading of answers and failures: plain functions over bytes and errors (agent-client.ts). */
import { MmauthError, ERROR_CODES, type ErrorCode } from '../errors.js';

/** `agent_unreachable` for the agent on `socketPath`, with the reason in words. */
export function unreachable(socketPath: string, why: string): MmauthError {
  return new MmauthError('agent_unreachable', `the token agent at ${socketPath} cannot be reached: ${why}`, {
    details: { socket: socketPath },
  });
}

/** The error an agent's error document names, with its code (a code this version does not know: `unexpected`). */
export function agentError(json: unknown, status: number): MmauthError {
  const error = (typeof json === 'object' && json !== null ? (json as Record<string, unknown>).error : undefined) as
    Record<string, unknown> | undefined;
  const code = typeof error?.code === 'string' ? error.code : 'unexpected';
  const message = typeof error?.message === 'string' ? error.message : `the agent answered HTTP ${status}`;
  const known = (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'unexpected';
  return new MmauthError(known, `agent: ${message}`, {
    status,
    ...(typeof error?.oauth_error === 'string' ? { oauthError: error.oauth_error } : {}),
    // The agent's fix line, for the command line's report (a lower layer sets no hint of its own).
    ...(typeof error?.hint === 'string' && error.hint !== '' ? { details: { agentHint: error.hint } } : {}),
  });
}

/** The status and body of a raw HTTP/1.1 answer, or undefined while it is not whole. */
export function parseAnswer(bytes: Buffer): { status: number; body: Buffer } | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const head = bytes.subarray(0, headEnd).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? NaN);
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
  const body = bytes.subarray(headEnd + 4);
  if (!Number.isFinite(status) || !Number.isFinite(length) || body.length < length) return undefined;
  return { status, body: body.subarray(0, length) };
}

/** The reason a connection failed, in words. */
export function failureOf(error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return 'no such socket (is the agent running, and its socket forwarded here?)';
  if (error.code === 'ECONNREFUSED') return 'nothing listens there (the agent stopped)';
  if (error.code === 'EACCES') return 'permission denied';
  return error.message;
}
