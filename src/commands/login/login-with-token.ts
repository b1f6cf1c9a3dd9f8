import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import { reportNewToken } from '../../ui/token-report.js';
import { isVisibleWord } from '../../util/visible-word.js';
import { preparePersonalToken, type PersonalTokenOptions } from '../../signin/personal-token.js';

/** Options of `login --with-token`. */
export type LoginWithTokenOptions = PersonalTokenOptions;

/**
 * `login --with-token`: reads a personal access token (spec §1, §5.2) from stdin (a masked prompt
 * on a terminal; never argv) and stores it (preparePersonalToken, then its store: token info asked unless --no-verify).
 * Throws `invalid_token_input` (empty, or white space inside), `token_inactive` (nothing stored),
 * network errors.
 */
export async function runLoginWithToken(options: LoginWithTokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  // Everything but the token first: a profile that may not take it fails before it is asked for.
  const prepared = await preparePersonalToken(options, ctx, out);
  const raw =
    ctx.stdin.isTTY === true
      ? await ctx.prompter.secret('Personal access token:', 'standard input: mmauth login --with-token < token.txt')
      : await ctx.readStdin();
  const accessToken = raw.trim();
  if (!isVisibleWord(accessToken)) {
    const message =
      accessToken === ''
        ? 'no token on standard input'
        : 'the token on standard input spans several words or lines, or holds control characters';
    throw new MmauthError('invalid_token_input', message, {
      hint: 'pipe exactly one token: mmauth login --with-token < token.txt',
    });
  }
  if (!options.verify) {
    out.warn('stored without checking it (--no-verify): `mmauth info` will tell whether the server accepts it');
  }
  const stored = await prepared.store(accessToken).catch((error: unknown) => {
    if (!hasErrorCode(error, 'token_inactive')) throw error;
    // A refused personal token is not renewed by signing in again: a new one is made where it was made.
    throw new MmauthError('token_inactive', `${prepared.baseUrl} refuses this token: expired, revoked or mistyped`, {
      oauthError: 'invalid_token',
      status: 401,
      hint: "make a new personal access token in the service's settings, then run mmauth login --with-token again",
    });
  });
  const checked = options.verify ? ', checked with token info' : '';
  const headline = `Stored a personal access token for ${stored.baseUrl} (profile "${stored.profileName}")${checked}`;
  reportNewToken(out, stored.token, stored.profileName, options.json === true, headline, {
    replaced: stored.replaced,
  });
}
