import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import { formatInstant } from '../../ui/format.js';
import { reportNewToken } from '../../ui/token-report.js';
import { IMPLICIT_DEPRECATED, type LoginOptions } from './login-options.js';
import { profileFlag } from '../../settings/next-step.js';
import { SECRET_SOURCES } from '../../failure/failure-hints.js';
import { askClientSecret } from '../../settings/settings.js';
import { completeTwoStep, startTwoStep } from '../../signin/two-step.js';

/**
 * `login --start`: the first of two steps (startTwoStep: the authorization request stored as the
 * profile's pending login, nothing listening), then prints the URL (--json: `{authorization_url,
 * redirect_uri, expires_at, profile}`) and what to do with the address the browser ends on.
 */
export async function runLoginStart(options: LoginOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const started = await startTwoStep(options, ctx, out);
  const { profileName, redirectUri, responseType } = started;
  if (options.json === true) {
    out.json({
      authorization_url: started.authorizationUrl,
      redirect_uri: redirectUri,
      expires_at: formatInstant(Date.parse(started.expiresAt)),
      profile: profileName,
    });
  } else {
    out.data(started.authorizationUrl);
  }
  if (responseType === 'token') out.warn(IMPLICIT_DEPRECATED);
  // The implicit flow's answer is in the fragment (#…), the code flow's in the query (?…).
  const ending = responseType === 'token' ? '#…' : '?…';
  out.info(
    `Open that URL in a browser, sign in and allow access; the browser then ends on ${redirectUri}${ending} (nothing listens there).\n` +
      `Copy that whole address and run, within 10 minutes:\n  mmauth login --complete '<the address>'${profileFlag(profileName)}`,
  );
}

/**
 * The address `--complete` was given (the argument, or stdin for `-`), as a URL. Throws `usage`
 * when it is not one.
 */
async function completionUrl(value: string, ctx: AppContext): Promise<URL> {
  const text = (value === '-' ? await ctx.readStdin() : value).trim();
  try {
    return new URL(text);
  } catch {
    throw new MmauthError(
      'usage',
      'what --complete was given is not a URL: give the whole address the browser ended on',
    );
  }
}

/** A second step's failure in the command line's words: its flags and the next command. */
function inLoginTerms(error: unknown): unknown {
  const profile =
    hasErrorCode(error, 'pending_login_missing') || hasErrorCode(error, 'pending_login_expired')
      ? profileFlag(error.details.profile ?? 'default')
      : '';
  if (hasErrorCode(error, 'pending_login_missing')) {
    return new MmauthError(error.code, error.message, {
      cause: error.cause,
      hint: `start one: mmauth login --start${profile}`,
    });
  }
  if (hasErrorCode(error, 'pending_login_expired')) {
    const at = formatInstant(Date.parse(error.details.expiresAt ?? ''));
    return new MmauthError(error.code, `${error.message} at ${at}`, {
      hint: `start again: mmauth login --start${profile}`,
    });
  }
  if (hasErrorCode(error, 'usage') && error.details.reason === 'authorization_url_given') {
    return new MmauthError(
      'usage',
      'that is the authorization URL --start printed, not the address the browser ended on after you allowed access',
      {
        hint: `open it in a browser, allow access, then give --complete the address it ends on (${error.details.redirectUri ?? ''}…)`,
      },
    );
  }
  if (hasErrorCode(error, 'client_secret_required') && error.details.reason === 'second_step') {
    return new MmauthError(
      error.code,
      `${error.details.clientId ?? 'the client'} is a confidential client: the code exchange needs its secret at --complete`,
      { cause: error.cause, hint: `give it to --complete: ${SECRET_SOURCES}` },
    );
  }
  return error;
}

/**
 * `login --complete <url|->`: the second step (completeTwoStep: the address checked against the
 * pending login, the code exchanged, the grant stored and the replaced one ended), reported as
 * `login` does, with whose grant it is. Throws what completeTwoStep throws, in the command line's words.
 */
export async function runLoginComplete(options: LoginOptions & { complete: string }, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  let signedIn;
  try {
    const readUrl = () => completionUrl(options.complete, ctx);
    const askSecret = ctx.prompter.canPrompt ? () => askClientSecret(ctx) : undefined;
    signedIn = await completeTwoStep(options, { readUrl, askSecret, notices: out }, ctx);
  } catch (error) {
    throw inLoginTerms(error);
  }
  const { token, profileName, baseUrl, replaced, resourceOwner } = signedIn;
  const headline = `Logged in to ${baseUrl} (profile "${profileName}")${signedIn.isImplicit ? ' with the implicit flow' : ''}`;
  reportNewToken(out, token, profileName, options.json === true, headline, {
    replaced,
    resource_owner_id: resourceOwner,
  });
  // Anyone who saw the printed URL could have made this a grant of their own account (attacks B3): say whose it is.
  if (resourceOwner !== null)
    out.info(`  Signed in as resource owner ${resourceOwner}: if that is not your account, run \`mmauth logout\`.`);
}
