import { isMmauthError, MmauthError, type ErrorCode } from '../errors.js';
import type { FailureContext } from './failure-context.js';
import { ExitCode, exitCodeOf } from '../exit-codes.js';

export type { FailureContext };
import { hintByCode } from './failure-hints.js';

/** Codes that say nothing about the server: `logout` cannot suggest --local-only for them. */
const LOCAL_CODES = new Set<ErrorCode>([
  'interrupted',
  'unknown_profile',
  'not_logged_in',
  'store_unreadable',
  'store_malformed',
  'store_write_failed',
  'store_lock_failed',
  'keyring_unavailable',
  'keyring_failed',
]);

/**
 * The hint inside `exec --sandbox`, where the grant, the config and a browser are out of reach:
 * what exec handed the process (`variables`) instead of a login.
 */
function sandboxHint(variables: readonly string[]): string {
  const uses: Record<string, string> = {
    MMAUTH_API_URL: 'MMAUTH_API_URL (the API, authenticated for you: curl "$MMAUTH_API_URL/PATH")',
    MMAUTH_TOKEN_FILE: 'MMAUTH_TOKEN_FILE (the current access token; mmauth token reads it)',
    MMAUTH_TOKEN_URL: 'MMAUTH_TOKEN_URL (a fresh token on request)',
  };
  const given = variables.map((name) => uses[name] ?? name);
  return given.length === 0
    ? 'this runs inside mmauth exec --sandbox, where the grant is out of reach, and exec handed it nothing it still has: keep the environment exec gave the program'
    : `this runs inside mmauth exec --sandbox, where the grant is out of reach (no login there): use ${given.join(', or ')}`;
}

/** The hint to print under `error`: its own (command layer), else the one its code implies. */
export function hintOf(error: MmauthError, context: FailureContext): string | undefined {
  // An agent's error carries the agent's own fix line (its command line wrote it): that one first.
  let hint = error.hint ?? error.details.agentHint ?? hintByCode(error, context);
  // Inside a sandbox a login (or the config, the keyring) is no way out: what exec handed the child is.
  const isLoginWay = LOCAL_CODES.has(error.code) || /mmauth login/.test(hint ?? '');
  if (context.sandboxVariables !== undefined && error.code !== 'interrupted' && isLoginWay) {
    return sandboxHint(context.sandboxVariables);
  }
  if (error.details.viaProxy === 'true') {
    hint = `${hint ?? ''}; a proxy is set (HTTP_PROXY/HTTPS_PROXY; NO_PROXY exempts hosts): check it too`;
  }
  // logout and `profile remove` end a grant: when the server is the trouble, forgetting it locally is the way out.
  const isEnding = context.command === 'logout' || context.command === 'remove';
  if (isEnding && exitCodeOf(error) !== ExitCode.usage && !LOCAL_CODES.has(error.code)) {
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
