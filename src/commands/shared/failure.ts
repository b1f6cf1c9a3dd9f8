import { isMmauthError, MmauthError, type ErrorCode } from '../../errors.js';
import type { TokenOrigin } from '../../oauth/wire.js';
import { probeHint, statusHint } from './hints.js';
import { firstSteps, nextStep } from './next-step.js';

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

const SECRET_SOURCES = 'MMAUTH_CLIENT_SECRET, --client-secret-file or --client-secret-stdin';

/** Hints for the server's OAuth errors (RFC 6749 §4.1.2.1, §5.2), worded for the run that failed. */
function oauthHint(oauthError: string | undefined, context: FailureContext): string | undefined {
  const again = `\`${nextStep(context.origin ?? 'authorization_code', context.profileName)}\``;
  switch (oauthError) {
    case 'invalid_client':
      return `check the client id and secret (--client-id / MMAUTH_CLIENT_ID; ${SECRET_SOURCES})`;
    case 'invalid_grant':
      return `the authorization code was refused (expired, used, or issued for another redirect URI): run ${again} again`;
    case 'invalid_scope':
      return 'pass --scope with scopes the server knows (space-separated)';
    case 'unauthorized_client':
      return 'this client may not do that; check --client-id and the client secret';
    case 'access_denied':
      return `the request was denied; run ${again} again and allow access`;
    default:
      return undefined;
  }
}

const CREDENTIAL_STORE_FILE = 'MMAUTH_CREDENTIAL_STORE=file';
/** The commands that store credentials, and so take --insecure-storage. */
const STORING_COMMANDS = new Set(['login', 'client-credentials']);

const STORE_HINT = 'fix or move the file aside; mmauth never resets it by itself';

/** The exit code of each code; the OAuth error codes decide by `oauthError` (oauthExitCode). */
const EXIT_CODES: Record<ErrorCode, ExitCode | 'oauth'> = {
  usage: ExitCode.usage,
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
  connection_failed: ExitCode.network,
  request_timeout: ExitCode.network,
  tls_failure: ExitCode.network,
  callback_timeout: ExitCode.network,
  not_logged_in: ExitCode.auth,
  unknown_profile: ExitCode.auth,
  token_expired: ExitCode.auth,
  token_lifetime_too_short: ExitCode.auth,
  token_inactive: ExitCode.auth,
  refresh_refused: ExitCode.auth,
  state_mismatch: ExitCode.auth,
  revocation_not_confirmed: ExitCode.auth,
  api_unauthorized: ExitCode.auth,
  credentials_lost: ExitCode.auth,
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
};

/** invalid_client and the other refusals exit 4, invalid_scope 2 (bad input), any other code 1. */
function oauthExitCode(oauthError: string | undefined): ExitCode {
  if (oauthError !== undefined && REFUSALS.has(oauthError)) return ExitCode.auth;
  return oauthError === 'invalid_scope' ? ExitCode.usage : ExitCode.failure;
}

/** The exit code for `error` (README "Exit codes"): the only place that decides one. */
export function exitCodeOf(error: MmauthError): ExitCode {
  const exitCode = EXIT_CODES[error.code];
  return exitCode === 'oauth' ? oauthExitCode(error.oauthError) : exitCode;
}

/** What the failing run was, for hints that name the next command: subcommand, profile, token origin. */
export interface FailureContext {
  command: string | undefined;
  profileName: string;
  origin: TokenOrigin | undefined;
}

/** The hint for an error the lower layers raised, by its code and wire facts; undefined for none. */
function hintByCode(error: MmauthError, context: FailureContext): string | undefined {
  const { details } = error;
  switch (error.code) {
    case 'invalid_base_url':
      return details.reason === 'not_absolute' ? 'pass --base-url https://host (or set MMAUTH_BASE_URL)' : undefined;
    case 'insecure_base_url':
      return details.suggestion === undefined ? undefined : `use ${details.suggestion}`;
    case 'invalid_profile_name':
      return 'use letters, digits, ".", "_" or "-", at most 64 characters (--profile / MMAUTH_PROFILE)';
    case 'port_in_use':
      return context.command === 'emulator'
        ? 'pass --port with another port, or --port 0 for a free one'
        : 'omit --redirect-uri to let mmauth pick a free port (the server accepts any port on 127.0.0.1), or pass another port';
    case 'port_not_allowed':
      return 'pass --redirect-uri with a port above 1023';
    case 'callback_timeout':
      return 'the authorization server may have shown an error page instead of redirecting (unknown client, redirect URI not registered, bad scope): check the browser; raise --wait SECONDS if you need more time';
    case 'request_timeout':
      return 'the server is slow or unreachable; raise --timeout SECONDS or try again';
    case 'tls_failure':
      return details.reason === 'not_tls'
        ? 'use http:// if the server is plain http on loopback, or the port that serves https'
        : 'if the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate (PEM)';
    case 'connection_failed':
      if (details.reason === 'proxy_auth') return statusHint(407);
      return details.reason === 'proxy_refused'
        ? 'check the proxy (HTTPS_PROXY / HTTP_PROXY) or exempt the host with NO_PROXY'
        : 'check --base-url and that the server is running';
    case 'response_too_large':
      return 'no OAuth answer is that large: check --base-url';
    case 'unexpected_status':
      return statusHint(error.status);
    case 'store_insecure':
      return 'make it yours and private (chown to this user; chmod 700 the directory, 600 the file; no links), or set MMAUTH_CONFIG_DIR to a directory of your own';
    case 'authorization_request_rejected':
      return probeHint(error.oauthError);
    case 'credentials_lost':
      return `run \`${nextStep(context.origin, context.profileName)}\` to store them again${context.origin === 'client_credentials' ? ' (give the client secret again)' : ''}; other profiles are untouched`;
    case 'keyring_unavailable':
      return STORING_COMMANDS.has(context.command ?? '')
        ? `unlock the keyring, or start a Secret Service (GNOME Keyring, KWallet, KeePassXC); to keep the credentials in the file in plain text (mode 0600) instead, pass --insecure-storage or set ${CREDENTIAL_STORE_FILE}`
        : `unlock the keyring, or start a Secret Service (GNOME Keyring, KWallet, KeePassXC): profile "${context.profileName}" keeps its credentials there, and nowhere else`;
    case 'keyring_failed':
      return `run \`mmauth doctor\` to check the keyring; to keep new credentials in the file instead, set ${CREDENTIAL_STORE_FILE}`;
    case 'store_lock_failed':
      return details.lock === undefined ? STORE_HINT : `if no mmauth is running, remove ${details.lock}`;
    case 'store_unreadable':
    case 'store_malformed':
    case 'store_write_failed':
      return STORE_HINT;
    case 'token_inactive':
      return context.origin === undefined
        ? `run ${firstSteps(context.profileName)} to get a new token`
        : `run \`${nextStep(context.origin, context.profileName)}\` to get a new token`;
    case 'state_mismatch':
      return 'this redirect does not belong to the login in progress';
    case 'revocation_not_confirmed':
      return 'the server revokes only tokens of the authenticated client: check the client id and secret of this profile';
    case 'authorization_error':
    case 'token_endpoint_error':
      if (error.status !== undefined && error.status >= 500) return 'try again later';
      return oauthHint(error.oauthError, context);
    case 'revocation_error': {
      const hint = oauthHint(error.oauthError, context);
      return hint ?? (oauthExitCode(error.oauthError) === ExitCode.auth ? 'check the client id and secret' : undefined);
    }
    default:
      return undefined;
  }
}

/** Codes that say nothing about the server: `logout` cannot suggest --local-only for them. */
const LOCAL_CODES = new Set<ErrorCode>([
  'interrupted',
  'store_unreadable',
  'store_malformed',
  'store_write_failed',
  'store_lock_failed',
  'keyring_unavailable',
  'keyring_failed',
]);

/** The hint to print under `error`: its own (command layer), else the one its code implies. */
export function hintOf(error: MmauthError, context: FailureContext): string | undefined {
  let hint = error.hint ?? hintByCode(error, context);
  if (error.details.viaProxy === 'true') {
    hint = `${hint ?? ''}; a proxy is set (HTTP_PROXY/HTTPS_PROXY; NO_PROXY exempts hosts): check it too`;
  }
  if (context.command === 'logout' && exitCodeOf(error) !== ExitCode.usage && !LOCAL_CODES.has(error.code)) {
    return `${hint === undefined ? '' : `${hint}; `}or pass --local-only to forget the token without revoking it`;
  }
  return hint;
}

/** A failure as it is reported: the code, the line for people, the hint and the exit code. */
export interface FailureReport {
  code: ErrorCode;
  message: string;
  hint: string | undefined;
  exitCode: ExitCode;
  oauthError: string | undefined;
  status: number | undefined;
}

/** Describes any thrown value: an MmauthError as it is, anything else as `unexpected` (exit 1). */
export function describeFailure(error: unknown, context: FailureContext): FailureReport {
  const failure = isMmauthError(error)
    ? error
    : new MmauthError('unexpected', `unexpected failure: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        hint: 'run again with --verbose for details',
      });
  return {
    code: failure.code,
    message: failure.message,
    hint: hintOf(failure, context),
    exitCode: exitCodeOf(failure),
    oauthError: failure.oauthError,
    status: failure.status,
  };
}
