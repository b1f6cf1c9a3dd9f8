/**
 * The error hierarchy. Every failure a user can meet is a CliError carrying the process exit code
 * and a one-line hint saying what to do next; src/cli.ts is the only place that turns one into an
 * exit. Exit codes are a contract (README "Exit codes").
 */

/** Exit codes: 0 ok, 1 other, 2 usage, 3 network, 4 authentication/authorization, 130 interrupted. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  network: 3,
  auth: 4,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Options of a CliError: what to do next, and the underlying cause for --verbose. */
export interface CliErrorOptions {
  hint?: string;
  cause?: unknown;
}

/** A failure to report in one line (plus an optional hint) and exit with `exitCode`. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;

  constructor(message: string, exitCode: ExitCode, options: CliErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.hint = options.hint;
  }
}

/** Bad or missing input, a refused base URL, no TTY to prompt on: exit 2. */
export class UsageError extends CliError {
  constructor(message: string, options: CliErrorOptions = {}) {
    super(message, ExitCode.usage, options);
  }
}

/** Connection refused or reset, DNS or TLS failure, timeout: exit 3. */
export class NetworkError extends CliError {
  constructor(message: string, options: CliErrorOptions = {}) {
    super(message, ExitCode.network, options);
  }
}

/**
 * The server or the resource owner refused: not logged in, expired/revoked/invalid token,
 * invalid_client, invalid_grant, access_denied, a revocation that did not take: exit 4.
 * `oauthError` is the RFC 6749 §5.2 / §4.1.2.1 error code when the server sent one.
 */
export class AuthError extends CliError {
  readonly oauthError: string | undefined;

  constructor(message: string, options: CliErrorOptions & { oauthError?: string } = {}) {
    super(message, ExitCode.auth, options);
    this.oauthError = options.oauthError;
  }
}

/** An unexpected, malformed or 5xx server answer, or any other failure: exit 1. */
export class ServerError extends CliError {
  constructor(message: string, options: CliErrorOptions = {}) {
    super(message, ExitCode.failure, options);
  }
}

/** The user pressed Ctrl-C (SIGINT): exit 130. */
export class InterruptedError extends CliError {
  constructor(message = 'interrupted') {
    super(message, ExitCode.interrupted);
  }
}
