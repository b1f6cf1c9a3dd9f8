import { EXIT_CODES, exitCodeOf } from './exit-codes.js';

/**
 * Every failure mmauth reports is an MmauthError with a stable `code`. Layers below the commands
 * (oauth, http, loopback, store) set only the code, the message and the wire facts; the command
 * layer's failure map (src/commands/shared/failure.ts) turns a code into an exit code and a hint.
 */

/** The stable error codes, lower_snake_case. A contract for scripts: add, never rename. */
export const ERROR_CODES = [
  // Bad or missing input (exit 2).
  'usage',
  'forbidden_origin',
  'sandbox_unavailable',
  'conflicting_options',
  'invalid_base_url',
  'insecure_base_url',
  'no_base_url',
  'no_client_id',
  'invalid_client_secret',
  'unreadable_secret_file',
  'invalid_scope_syntax',
  'invalid_profile_name',
  'invalid_redirect_uri',
  'invalid_token_input',
  'input_too_large',
  'prompt_unavailable',
  'port_in_use',
  'port_not_allowed',
  'base_url_mismatch',
  'identity_change',
  'client_secret_required',
  'personal_token',
  'foreign_url',
  'invalid_header',
  'authorization_request_rejected',
  'pending_login_missing',
  'pending_login_expired',
  'no_browser',
  'profile_exists',
  // No answer (exit 3).
  'connection_failed',
  'agent_unreachable',
  'agent_untrusted',
  'agent_outdated',
  'request_timeout',
  'tls_failure',
  'callback_timeout',
  'device_code_expired',
  'device_flow_unavailable',
  'device_access_denied',
  'deadline_exceeded',
  // Refused (exit 4).
  'not_logged_in',
  'unknown_profile',
  'profile_not_served',
  'directory_file_not_approved',
  'directory_file_invalid',
  'token_expired',
  'token_lifetime_too_short',
  'token_inactive',
  'refresh_refused',
  'state_mismatch',
  'revocation_not_confirmed',
  'api_unauthorized',
  'credentials_lost',
  'login_intercepted',
  'not_renewable',
  'iss_missing',
  'iss_mismatch',
  // The server's OAuth error; the exit code follows `oauthError` (RFC 6749 §4.1.2.1, §5.2; RFC 7009).
  'authorization_error',
  'token_endpoint_error',
  'revocation_error',
  // Anything else (exit 1).
  'malformed_response',
  'unexpected_status',
  'api_error',
  'response_too_large',
  'store_unreadable',
  'store_malformed',
  'store_write_failed',
  'store_lock_failed',
  'store_insecure',
  'keyring_unavailable',
  'keyring_failed',
  'listener_failed',
  'doctor_failed',
  'unexpected',
  // Ctrl-C (exit 130).
  'interrupted',
] as const;

/** One of ERROR_CODES. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Compile-time: the exit table (exit-codes.ts, which imports nothing) has exactly the ErrorCodes. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const IS_EXIT_TABLE_WHOLE: SameKeys<keyof typeof EXIT_CODES, ErrorCode> = true;
void IS_EXIT_TABLE_WHOLE;

/** What an MmauthError carries besides its code and message. */
export interface MmauthErrorOptions {
  cause?: unknown;
  /** The OAuth `error` value the server sent (RFC 6749 §5.2, §4.1.2.1; RFC 6750 §3.1). */
  oauthError?: string | undefined;
  /** The server's `error_description`. */
  oauthErrorDescription?: string | undefined;
  /** The HTTP status of the answer, where there was one. */
  status?: number | undefined;
  /** What to do next; set only in the command layer, which may name flags and variables. */
  hint?: string | undefined;
  /** Facts a hint needs (a port, a host, `viaProxy`), never secrets. */
  details?: Readonly<Record<string, string>>;
  /** The exit code the CLI gives this error (set on what the library throws: the project's rules). */
  exitCode?: number | undefined;
}

/** Marks MmauthErrors across bundles (the emulator is a bundle of its own, with its own class). */
const BRAND = Symbol.for('mmauth.error');

/** A failure with a stable code (ERROR_CODES) and a one-line message for people. */
export class MmauthError extends Error {
  readonly [BRAND] = true;
  readonly code: ErrorCode;
  readonly oauthError: string | undefined;
  readonly oauthErrorDescription: string | undefined;
  readonly status: number | undefined;
  readonly hint: string | undefined;
  readonly details: Readonly<Record<string, string>>;
  /**
   * The exit code the CLI gives this error (README "Exit codes": 1 other, 2 usage, 3 network,
   * 4 refused): the project's table for `code` (and `oauthError`) unless set in the options.
   */
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: MmauthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MmauthError';
    this.code = code;
    this.oauthError = options.oauthError;
    this.oauthErrorDescription = options.oauthErrorDescription;
    this.status = options.status;
    this.hint = options.hint;
    this.details = options.details ?? {};
    this.exitCode = options.exitCode ?? exitCodeOf(this);
  }
}

/** Whether `error` is an MmauthError, from this bundle or another one. */
export function isMmauthError(error: unknown): error is MmauthError {
  return error instanceof Error && (error as Partial<Record<typeof BRAND, unknown>>)[BRAND] === true;
}

/** Whether `error` is an MmauthError with `code`. */
export function hasErrorCode(error: unknown, code: ErrorCode): error is MmauthError {
  return isMmauthError(error) && error.code === code;
}
