import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { revokeAndConfirm, type EndedGrant } from '../grant/end-grant.js';
import { endCurrentGrant } from '../grant/end-current-grant.js';
import { resolveGrantTarget } from '../settings/grant-target.js';
import { profileFlag } from '../settings/next-step.js';
import type { Target } from '../settings/target.js';
import { selectAccessToken } from './access-token.js';

/**
 * Revokes `target`'s token (MMAUTH_TOKEN, else the profile's) and proves it: endCurrentGrant for a stored
 * token (RFC 7009 §2, then token info must answer 401; its refresh token and the tokens it replaced
 * too), then forgets the stored token (the profile's settings stay); revokeAndConfirm alone for a
 * token given in MMAUTH_TOKEN. `clientOptions` are the client's settings for this run; `note` gets
 * notes for people. Resolves with how it ended, the access token revoked, and whether a stored token
 * was forgotten. Throws `personal_token` (revoked only where it was made), and what endGrant and
 * the settings throw, the stored token kept.
 */
export async function revokeTargetToken(
  target: Target,
  clientOptions: Parameters<typeof resolveGrantTarget>[0],
  ctx: AppContext,
  note: (line: string) => void,
): Promise<EndedGrant & { isForgotten: boolean }> {
  const { profile, profileName } = target;
  const { accessToken, stored } = selectAccessToken(ctx, profileName, profile, target.endpoints.baseUrl);
  if (stored?.grant === 'personal') {
    throw new MmauthError(
      'personal_token',
      "a personal access token can only be revoked where it was created (the service's settings)",
      { hint: `\`mmauth logout${profileFlag(profileName)}\` forgets it here` },
    );
  }
  const { grant, stored: where } = await resolveGrantTarget(clientOptions, ctx, target);
  if (stored === undefined) {
    return {
      result: await revokeAndConfirm(target.server, grant.client, accessToken),
      accessToken,
      isForgotten: false,
    };
  }
  // The grant as it is when the end finishes, under the lock: no renewal races it.
  const ended = await endCurrentGrant(grant, ctx, note, where, (current) => ({
    ...current,
    token: undefined,
    chainToRetire: undefined,
  }));
  // Another process ended and forgot it meanwhile: nothing live was left to revoke.
  return { ...(ended ?? { result: 'already_inactive', accessToken }), isForgotten: true };
}
