import type { AppContext } from '../context.js';
import { givenToken } from '../settings/given-token.js';
import { MmauthError } from '../errors.js';
import type { Profile, StoredToken } from '../store/profile.js';
import { judgeStoredToken, secondsLeft } from '../store/token-state.js';
import { formatInstant } from '../ui/format.js';
import { isVisibleWord } from '../util/visible-word.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { firstSteps, nextStep } from '../settings/next-step.js';

/** The token a command acts on, and its stored record when mmauth knows it. */
export interface AccessTokenChoice {
  accessToken: string;
  /** Undefined for a token from MMAUTH_TOKEN that is not the stored one. */
  stored: StoredToken | undefined;
}

/**
 * The access token to act on: MMAUTH_TOKEN when set, else the profile's stored token. With
 * `minTtlS` (token, header) the stored token must still be valid for that many seconds and a
 * MMAUTH_TOKEN is taken as is; without it (info, revoke) any stored token is taken and a
 * MMAUTH_TOKEN equal to it keeps its record. A stored token goes only to its profile's origin
 * (`baseUrl`: this run's, undefined for the profile's). Throws `base_url_mismatch`, `not_logged_in`, `token_expired` or
 * `token_lifetime_too_short`, each naming the profile.
 */
export function selectAccessToken(
  ctx: AppContext,
  profileName: string,
  profile: Profile | undefined,
  baseUrl: string | undefined,
  minTtlS?: number,
): AccessTokenChoice {
  const fromEnv = givenToken(ctx.env);
  const token = profile?.token;
  if (fromEnv) {
    if (!isVisibleWord(fromEnv)) {
      throw new MmauthError(
        'invalid_token_input',
        'MMAUTH_TOKEN holds characters no bearer token has (spaces, control characters)',
        {
          hint: 'set MMAUTH_TOKEN to the bare token (RFC 6750: printable ASCII, no spaces)',
        },
      );
    }
    const isStored = minTtlS === undefined && token?.accessToken === fromEnv;
    return { accessToken: fromEnv, stored: isStored ? token : undefined };
  }
  if (token === undefined) {
    const alternative = minTtlS === undefined ? ' (or set MMAUTH_TOKEN)' : '';
    throw new MmauthError('not_logged_in', `not logged in: profile "${profileName}" has no stored token`, {
      hint: `run ${firstSteps(profileName)} first${alternative}`,
    });
  }
  assertCredentialOrigin(profileName, profile, baseUrl);
  if (minTtlS === undefined) return { accessToken: token.accessToken, stored: token };
  const nowMs = ctx.nowMs();
  const hint = `get a new one: ${nextStep(token.grant, profileName)}`;
  if (judgeStoredToken(token, nowMs) === 'expired') {
    const at = formatInstant(Date.parse(token.expiresAt ?? ''));
    throw new MmauthError('token_expired', `the token of profile "${profileName}" expired at ${at}`, { hint });
  }
  const leftS = secondsLeft(token, nowMs);
  if (leftS !== undefined && leftS < minTtlS) {
    const message = `the token of profile "${profileName}" has ${leftS} s left, less than --min-ttl ${minTtlS}`;
    throw new MmauthError('token_lifetime_too_short', message, { hint });
  }
  return { accessToken: token.accessToken, stored: token };
}
