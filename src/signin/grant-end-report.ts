import type { GrantEnd } from '../grant/end-grant.js';
import type { Output } from '../ui/output.js';
import { maskToken } from '../ui/format.js';

/** The JSON fields every command that ends a grant reports. */
export interface GrantEndFields {
  /** A revocation that token info confirms, or that a server without token info answered 200. */
  revoked: boolean;
  /** Token info accepted the token before and refuses it after. */
  confirmed: boolean;
  /** Nothing live was left to revoke: the server had already refused the token or its refresh token. */
  already_invalid: boolean;
}

/** The JSON fields of how a grant ended. */
export function grantEndFields(result: GrantEnd): GrantEndFields {
  const alreadyInvalid = result === 'already_inactive' || result === 'already_ended';
  return { revoked: !alreadyInvalid, confirmed: result === 'confirmed', already_invalid: alreadyInvalid };
}

/** One sentence on how the grant of `accessToken` on `baseUrl` ended, in the same words for every command. */
export function grantEndSentence(result: GrantEnd, accessToken: string, baseUrl: string): string {
  const token = maskToken(accessToken);
  switch (result) {
    case 'confirmed':
      return `Revoked ${token} on ${baseUrl} (confirmed: token info now refuses it)`;
    case 'unconfirmed':
      return `Revoked ${token} on ${baseUrl} (not confirmed: the server has no token info endpoint)`;
    case 'already_inactive':
      return `The token ${token} was already expired or revoked on ${baseUrl}: nothing live to revoke`;
    case 'already_ended':
      return `The server had already ended this grant on ${baseUrl} (it refused the refresh token): nothing live to revoke`;
  }
}

/** Prints how a grant ended: a ✓ line for a revocation, an info line when nothing live was left. */
export function reportGrantEnd(out: Output, result: GrantEnd, accessToken: string, baseUrl: string): void {
  const sentence = grantEndSentence(result, accessToken, baseUrl);
  if (grantEndFields(result).revoked) out.success(sentence);
  // A masked token keeps its case: the sentences begin with a word of their own, never the token.
  else out.info(`${sentence}.`);
}
