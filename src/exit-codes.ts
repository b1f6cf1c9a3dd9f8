/** Exit codes (README "Exit codes"): 0 ok, 1 other, 2 usage, 3 network, 4 refused, 130 Ctrl-C. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  network: 3,
  auth: 4,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** OAuth `error` values that mean "not allowed" (RFC 6749 §5.2, RFC 6750 §3.1, RFC 7009 §2.2.1): exit 4. */
const REFUSALS = new Set(['invalid_client', 'invalid_grant', 'unauthorized_client', 'access_denied', 'invalid_token']);

/**
 * The exit code of each error code; the OAuth error codes decide by `oauthError` (oauthExitCode).
 * errors.ts checks at compile time that every ErrorCode is here (this module imports nothing).
 */
export const EXIT_CODES = {
  usage: ExitCode.usage,
  forbidden_origin: ExitCode.usage,
  sandbox_unavailable: ExitCode.usage,
  conflicting_options: ExitCode.usage,
  invalid_base_url: ExitCode.usage,
  insecure_base_url: ExitCode.usage,
  no_base_url: ExitCode.usage,
  no_client_id: ExitCode.usage,
  invalid_client_secret: ExitCode.usage,
  unreadable_secret_file: ExitCode.usage,
  invalid_scope_syntax: ExitCode.usage,
  invalid_profile_name: ExitCode.usage,
  invalid_redirect_uri: ExitCode.usage,
  invalid_token_input: ExitCode.usage,
  input_too_large: ExitCode.usage,
  prompt_unavailable: ExitCode.usage,
  port_in_use: ExitCode.usage,
  port_not_allowed: ExitCode.usage,
  base_url_mismatch: ExitCode.usage,
  identity_change: ExitCode.usage,
  client_secret_required: ExitCode.usage,
  personal_token: ExitCode.usage,
  foreign_url: ExitCode.usage,
  invalid_header: ExitCode.usage,
  authorization_request_rejected: ExitCode.usage,
  pending_login_missing: ExitCode.usage,
  pending_login_expired: ExitCode.usage,
  no_browser: ExitCode.usage,
  profile_exists: ExitCode.usage,
  connection_failed: ExitCode.network,
  agent_unreachable: ExitCode.network,
  agent_untrusted: ExitCode.network,
  agent_outdated: ExitCode.network,
  request_timeout: ExitCode.network,
  tls_failure: ExitCode.network,
  callback_timeout: ExitCode.network,
  device_code_expired: ExitCode.network,
  device_flow_unavailable: ExitCode.usage,
  device_access_denied: ExitCode.auth,
  deadline_exceeded: ExitCode.network,
  not_logged_in: ExitCode.auth,
  unknown_profile: ExitCode.auth,
  profile_not_served: ExitCode.auth,
  directory_file_not_approved: ExitCode.auth,
  directory_file_invalid: ExitCode.auth,
  token_expired: ExitCode.auth,
  token_lifetime_too_short: ExitCode.auth,
  token_inactive: ExitCode.auth,
  refresh_refused: ExitCode.auth,
  login_intercepted: ExitCode.auth,
  not_renewable: ExitCode.auth,
  state_mismatch: ExitCode.auth,
  revocation_not_confirmed: ExitCode.auth,
  api_unauthorized: ExitCode.auth,
  credentials_lost: ExitCode.auth,
  iss_missing: ExitCode.auth,
  iss_mismatch: ExitCode.auth,
  authorization_error: 'oauth',
  token_endpoint_error: 'oauth',
  revocation_error: 'oauth',
  malformed_response: ExitCode.failure,
  unexpected_status: ExitCode.failure,
  api_error: ExitCode.failure,
  response_too_large: ExitCode.failure,
  store_unreadable: ExitCode.failure,
  store_malformed: ExitCode.failure,
  store_write_failed: ExitCode.failure,
  store_lock_failed: ExitCode.failure,
  store_insecure: ExitCode.failure,
  keyring_unavailable: ExitCode.failure,
  keyring_failed: ExitCode.failure,
  listener_failed: ExitCode.failure,
  doctor_failed: ExitCode.failure,
  unexpected: ExitCode.failure,
  interrupted: ExitCode.interrupted,
} as const satisfies Record<string, ExitCode | 'oauth'>;

/** invalid_client and the other refusals exit 4, invalid_scope 2 (bad input), any other code 1. */
export function oauthExitCode(oauthError: string | undefined): ExitCode {
  if (oauthError !== undefined && REFUSALS.has(oauthError)) return ExitCode.auth;
  return oauthError === 'invalid_scope' ? ExitCode.usage : ExitCode.failure;
}

/**
 * The exit code for `error` (README "Exit codes"): the only place that decides one. `error` is an
 * MmauthError (its `code` one of EXIT_CODES's keys); an unknown code is 1.
 */
export function exitCodeOf(error: { code: string; oauthError?: string | undefined }): ExitCode {
  const exitCode: ExitCode | 'oauth' | undefined = (EXIT_CODES as Record<string, ExitCode | 'oauth'>)[error.code];
  if (exitCode === undefined) return ExitCode.failure;
  return exitCode === 'oauth' ? oauthExitCode(error.oauthError) : exitCode;
}
