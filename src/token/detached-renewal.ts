import type { AppContext } from '../context.js';
import { ERROR_CODES, MmauthError, type ErrorCode } from '../errors.js';
import { isRecord } from '../util/is-record.js';

/** A renewal running in a process of its own (startDetachedRenewal). */
export interface DetachedRenewal {
  /**
   * Settles when that process exits: resolves when it handed out a token (renewed, or the current
   * one with a warning it said), rejects with the MmauthError its error document names.
   */
  done: Promise<void>;
  /** Lets it run on without this process: its pipes closed, never waited for. */
  release(): void;
}

/** What the renewal process is asked: the profile, --min-ttl, --timeout, --verify and --verbose. */
export interface DetachedRenewalRequest {
  profileName: string;
  minTtl: number;
  /** Seconds, for each request of that process. */
  timeout: number;
  /** The server has refused the access token: that process asks again (--verify) and renews. */
  verify: boolean;
  verbose: boolean;
}

/** The MmauthError of an error document (docs/json-and-exit-codes.md) a renewal process printed. */
function errorOfDocument(stdout: string, exitCode: number | null): MmauthError {
  let error: unknown;
  try {
    error = (JSON.parse(stdout) as { error?: unknown }).error;
  } catch {
    error = undefined;
  }
  if (!isRecord(error) || !(ERROR_CODES as readonly string[]).includes(String(error.code))) {
    return new MmauthError('unexpected', `the renewal process ended with exit code ${exitCode} and no error document`);
  }
  return new MmauthError(error.code as ErrorCode, String(error.message ?? ''), {
    ...(typeof error.hint === 'string' ? { hint: error.hint } : {}),
    ...(typeof error.status === 'number' ? { status: error.status } : {}),
    ...(typeof error.oauth_error === 'string' ? { oauthError: error.oauth_error } : {}),
  });
}

/**
 * Starts `mmauth token --json --profile NAME --min-ttl N --timeout S` (plus `--verify`,
 * `--verbose` as asked) as a process of its own, detached from this one's session, in the same
 * environment and working directory: `command` is how to run this mmauth (AppContext.selfCommand).
 * That process renews under the store's lock as any `mmauth token` does and stores what the server
 * answers. Its stderr (warnings, the trace) is passed on to this process's stderr while this process
 * waits, but for its error report (this process reports the error the document names). When the caller stops waiting (its --deadline), `release()` lets it finish on its own: the
 * pair the server mints is stored, never lost with this process (each of its requests bounded by
 * --timeout). Throws what spawning throws.
 */
export async function startDetachedRenewal(
  command: readonly string[],
  request: DetachedRenewalRequest,
  ctx: AppContext,
): Promise<DetachedRenewal> {
  const { spawn } = await import('node:child_process');
  const [file = process.execPath, ...prefix] = command;
  const args = [
    ...prefix,
    'token',
    '--json',
    '--profile',
    request.profileName,
    '--min-ttl',
    String(request.minTtl),
    '--timeout',
    String(request.timeout),
    ...(request.verify ? ['--verify'] : []),
    ...(request.verbose ? ['--verbose'] : []),
  ];
  const child = spawn(file, args, {
    cwd: ctx.cwd(),
    env: ctx.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let isReleased = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    if (stdout.length < 65_536) stdout += chunk;
  });
  // Its warnings and trace pass on, line by line; its error report does not: this process reports
  // the error itself (the helper contract's one error line and one fix line), from the document.
  let pending = '';
  let isErrorReport = false;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const end = pending.lastIndexOf('\n') + 1;
    for (const line of pending.slice(0, end).split('\n').slice(0, -1)) {
      isErrorReport ||= line.startsWith('error: ');
      if (!isReleased && !isErrorReport) ctx.stderr.write(`${line}\n`);
    }
    pending = pending.slice(end);
  });
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new MmauthError('unexpected', `cannot start the renewal process: ${error.message}`, { cause: error })),
    );
    child.once('close', (code) => (code === 0 ? resolve() : reject(errorOfDocument(stdout, code))));
  });
  done.catch(() => undefined);
  return {
    done,
    release: () => {
      isReleased = true;
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
    },
  };
}
