import { isMmauthError, MmauthError, type ErrorCode } from '../errors.js';
import { exitCodeOf } from '../exit-codes.js';
import { redactLooseFields, SecretScrubber } from '../http/redact.js';

/** The codes after which only a login helps: a program may fall through to another credential. */
export const LOGIN_REQUIRED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_logged_in',
  'unknown_profile',
  'refresh_refused',
  'token_expired',
  'credentials_lost',
]);

/**
 * An MmauthError after which a login is needed (the project's rules: `not_logged_in`, `unknown_profile`,
 * `refresh_refused`, `token_expired`, `credentials_lost`), as Azure's `CredentialUnavailableError`
 * lets a chain of credentials try the next one. `code` and `exitCode` (4) as the CLI gives them.
 */
export class LoginRequiredError extends MmauthError {
  constructor(code: ErrorCode, message: string, options: ConstructorParameters<typeof MmauthError>[2] = {}) {
    super(code, message, options);
    this.name = 'LoginRequiredError';
  }
}

/** What a program's user does next, for the codes after which only a login helps (the CLI words these by its failure map). */
const LIBRARY_HINTS: Partial<Record<ErrorCode, string>> = {
  not_logged_in: 'sign in first: mmauth login (mmauth login --profile NAME for another profile)',
  unknown_profile: 'create it: mmauth login --profile NAME, or name another in the profile option',
  refresh_refused: 'the server no longer accepts the grant: sign in again with mmauth login',
  token_expired: 'sign in again: mmauth login',
  credentials_lost: 'store them again: mmauth login (or mmauth client-credentials)',
  client_secret_required: "give the client's secret: the clientSecret option, or MMAUTH_CLIENT_SECRET",
};

/** The command line's flags a message may name, and the library's option for each. */
const OPTION_OF_FLAG: ReadonlyArray<readonly [RegExp, string]> = [
  [/selected by --profile/g, 'selected by the profile option'],
  [/check --profile \/ MMAUTH_PROFILE/g, 'check the profile option / MMAUTH_PROFILE'],
  [/--profile NAME or MMAUTH_PROFILE/g, 'the profile option or MMAUTH_PROFILE'],
  [/--min-ttl/g, 'the minTtl option'],
  [/pass --base-url [^ ,;)]+/g, 'give the baseUrl option'],
  [/--base-url/g, 'the baseUrl option'],
  [/--client-id/g, 'the clientId option'],
  [/--client-secret-file PATH|--client-secret-file/g, 'the clientSecret option'],
  [/--redirect-uri/g, 'the redirectUri option'],
  [/--scope/g, 'the scope option'],
  [/--wait/g, 'the wait option'],
];

/**
 * `text` in the library's terms: its options, not the command line's flags (a `mmauth …` command
 * to run at a terminal stays as it is: that is what a program's user runs next).
 */
const inLibraryTerms = (text: string) =>
  OPTION_OF_FLAG.reduce(
    (result, [flag, option]) =>
      result
        .split(/(`mmauth [^`]*`|mmauth (?:login|client-credentials)(?: --profile \S+)?)/)
        .map((part, i) => (i % 2 === 1 ? part : part.replace(flag, option)))
        .join(''),
    text,
  );

/** How deep a cause chain is kept: what a reader needs (the failure and what caused it), no more. */
const MAX_CAUSE_DEPTH = 4;

/**
 * `cause` as a chain of plain Errors holding only a name and a scrubbed message and stack: no
 * response, body, request or other own property of the original (attacks L3: oauth4webapi's errors
 * carry the server's parsed answer, which may echo the refresh token and client secret).
 */
function cleanCause(cause: unknown, scrub: (text: string) => string, depth = 0): Error | undefined {
  if (!(cause instanceof Error) || depth >= MAX_CAUSE_DEPTH) return undefined;
  const next = cleanCause(cause.cause, scrub, depth + 1);
  const clean = new Error(scrub(cause.message), next === undefined ? undefined : { cause: next });
  clean.name = cause.name;
  clean.stack = scrubStack(cause, clean.message, scrub);
  return clean;
}

/**
 * `error`'s stack with `message` (already scrubbed) as its header and the frames scrubbed: the
 * header is never read as a `Name: value` field (the whole message would go as a secret).
 */
function scrubStack(error: Error, message: string, scrub: (text: string) => string): string {
  const header = `${error.name}: ${error.message}`;
  const stack = error.stack ?? header;
  const frames = stack.startsWith(header) ? stack.slice(header.length) : `\n${stack}`;
  return `${error.name}: ${message}${scrub(frames)}`;
}

/**
 * `error` as the library throws it: an MmauthError with its `exitCode` (the exit
 * code the CLI gives it), a LoginRequiredError for the codes of LOGIN_REQUIRED_CODES; anything that
 * is no MmauthError becomes `unexpected` (exit 1) with it as the cause. Every string it holds (message,
 * stack, the server's description, details, the cause chain) has the secrets `secrets` knows and
 * secret-named fields (`refresh_token=…`, `"client_secret": …`) scrubbed, so that `console.error`,
 * `util.inspect` and `JSON.stringify` of it print none.
 */
export function toLibraryError(error: unknown, secrets?: SecretScrubber): MmauthError {
  const scrubber = secrets ?? new SecretScrubber();
  // Secret-named fields first (their values are remembered), then every remembered secret wherever it stands.
  const scrub = (text: string) => inLibraryTerms(scrubber.scrub(redactLooseFields(text, scrubber)));
  const known = isMmauthError(error)
    ? error
    : new MmauthError('unexpected', error instanceof Error ? error.message : String(error), { cause: error });
  const cause = cleanCause(known.cause ?? (known === error ? undefined : error), scrub);
  const options = {
    ...(cause === undefined ? {} : { cause }),
    oauthError: known.oauthError,
    oauthErrorDescription: known.oauthErrorDescription === undefined ? undefined : scrub(known.oauthErrorDescription),
    status: known.status,
    hint:
      known.hint !== undefined
        ? scrub(known.hint)
        : known.details.reason === 'confidential_client'
          ? "give the client's secret: login()'s clientSecret option, or MMAUTH_CLIENT_SECRET"
          : LIBRARY_HINTS[known.code],
    details: Object.fromEntries(Object.entries(known.details).map(([key, value]) => [key, scrub(value)])),
    exitCode: exitCodeOf(known),
  };
  const thrown = LOGIN_REQUIRED_CODES.has(known.code)
    ? new LoginRequiredError(known.code, scrub(known.message), options)
    : new MmauthError(known.code, scrub(known.message), options);
  if (thrown.stack !== undefined) thrown.stack = scrubStack(thrown, thrown.message, scrub);
  return thrown;
}
