import type { AppContext } from '../../context.js';
import { hasErrorCode, MmauthError } from '../../errors.js';
import { requireTokenInfo } from '../../oauth/token-info.js';
import type { StoredToken } from '../../store/profile.js';
import { reportToken } from '../../ui/token-report.js';
import { endReplacedGrant, storeNewGrant } from '../../signin/replaced-grant.js';
import type { CommonOptions } from '../options.js';
import { isVisibleWord } from '../../util/visible-word.js';
import { assertMayStore, credentialsFor } from '../../grant/credential-binding.js';
import { prepareStoring, type StorageOptions } from '../../signin/credential-storage.js';
import { resolveTarget } from '../../settings/target.js';

/** Options of `login --with-token`. */
export interface LoginWithTokenOptions extends CommonOptions, StorageOptions {
  /** false with --no-verify. */
  verify: boolean;
  /** Replace a client token or another server's credentials. */
  replace?: boolean;
}

/**
 * `login --with-token`: reads a personal access token (spec §1, §5.2) from stdin (a masked prompt
 * on a terminal; never argv), asks token info about it (spec §4.3) unless `verify` is false, and
 * stores it with origin `personal` and the scopes and lifetime token info reported. Throws
 * `invalid_token_input` (empty, or white space inside), `token_inactive` (nothing stored), network errors.
 */
export async function runLoginWithToken(options: LoginWithTokenOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profileName } = target;
  assertMayStore(profileName, target.profile, endpoints.baseUrl, 'personal', options.replace === true);
  const intent = await prepareStoring(options, target.store, profileName, out);
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
  const nowMs = ctx.nowMs();
  const obtainedAt = new Date(nowMs).toISOString();
  let token: StoredToken = {
    accessToken,
    tokenType: 'bearer',
    scope: undefined,
    grant: 'personal',
    obtainedAt,
    expiresAt: undefined,
  };
  if (options.verify) {
    const info = await requireTokenInfo(target.server, accessToken).catch((error: unknown) => {
      if (!hasErrorCode(error, 'token_inactive')) throw error;
      // A refused personal token is not renewed by signing in again: a new one is made where it was made.
      throw new MmauthError('token_inactive', `${endpoints.baseUrl} refuses this token: expired, revoked or mistyped`, {
        oauthError: 'invalid_token',
        status: 401,
        hint: "make a new personal access token in the service's settings, then run mmauth login --with-token again",
      });
    });
    token = {
      ...token,
      scope: info.scopes.length === 0 ? undefined : info.scopes.join(' '),
      expiresAt:
        info.expiresInSeconds === null ? undefined : new Date(nowMs + info.expiresInSeconds * 1000).toISOString(),
    };
  } else {
    out.warn('stored without checking it (--no-verify): `mmauth info` will tell whether the server accepts it');
  }
  const former = await storeNewGrant(
    target.store,
    profileName,
    token,
    (current) => ({
      baseUrl: endpoints.baseUrl,
      clientSecret: credentialsFor(current, endpoints.baseUrl)?.clientSecret,
    }),
    nowMs,
    intent,
  );
  const checked = options.verify ? ', checked with token info' : '';
  const headline = `Stored a personal access token for ${endpoints.baseUrl} (profile "${profileName}")${checked}`;
  const run = { ...options, clientId: former?.clientId ?? '', clientSecret: undefined };
  const replaced = await endReplacedGrant(former, token, run, ctx, out, endpoints.baseUrl);
  reportToken(out, token, profileName, nowMs, options.json === true, headline, { replaced });
}
