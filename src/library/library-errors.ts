import { isMmauthError, MmauthError, type ErrorCode } from '../errors.js';
import { exitCodeOf } from '../exit-codes.js';

/** The codes after which only a login helps: a program may fall through to another credential. */
export const LOGIN_REQUIRED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_logged_in',
  'unknown_profile',
  'refresh_refused',
  'token_expired',
  'credentials_lost',
]);

/**
 * An MmauthError after which a login is needed (decisions 44: `not_logged_in`, `unknown_profile`,
 * `refresh_refused`, `token_expired`, `credentials_lost`), as Azure's `CredentialUnavailableError`
 * lets a chain of credentials try the next one. `code` and `exitCode` (4) as the CLI gives them.
 */
export class LoginRequiredError extends MmauthError {
  constructor(code: ErrorCode, message: string, options: ConstructorParameters<typeof MmauthError>[2] = {}) {
    super(code, message, options);
    this.name = 'LoginRequiredError';
  }
}

/**
 * `error` as the library throws it (decisions 44): an MmauthError with its `exitCode` (the exit
 * code the CLI gives it), a LoginRequiredError for the codes of LOGIN_REQUIRED_CODES; anything that
 * is no MmauthError becomes `unexpected` (exit 1) with it as the cause.
 */
export function toLibraryError(error: unknown): MmauthError {
  const known = isMmauthError(error)
    ? error
    : new MmauthError('unexpected', error instanceof Error ? error.message : String(error), { cause: error });
  const options = {
    cause: known.cause ?? error,
    oauthError: known.oauthError,
    oauthErrorDescription: known.oauthErrorDescription,
    status: known.status,
    hint: known.hint,
    details: known.details,
    exitCode: exitCodeOf(known),
  };
  return LOGIN_REQUIRED_CODES.has(known.code)
    ? new LoginRequiredError(known.code, known.message, options)
    : new MmauthError(known.code, known.message, options);
}
