import type { ListedProfile } from '../store/profile-listing.js';
import { secondsLeft, type TokenState } from '../store/token-state.js';
import { formatDuration, formatInstant } from '../ui/format.js';
import type { TokenCheck } from './token-check.js';

/** When a token was obtained (`obtainedAt`, ISO 8601), with how long ago at `nowMs` (epoch ms). */
export function obtainedWords(obtainedAt: string, nowMs: number): string {
  const ms = Date.parse(obtainedAt);
  return `${formatInstant(ms)} (${formatDuration(Math.max(0, Math.round((nowMs - ms) / 1000)))} ago)`;
}

/**
 * A stored token's state in `status`'s words: none, expired (when), valid (how long left, until
 * when) or without expiry, with what token info said (`check`: active, refused, unreachable, or
 * null when not asked), and when it was obtained. `nowMs`: epoch ms.
 */
export function describeState(state: TokenState, profile: ListedProfile, nowMs: number, check: TokenCheck): string {
  const token = profile.token;
  const verdict =
    check === 'active'
      ? 'active (token info accepts it)'
      : check === 'refused'
        ? 'refused by token info (revoked or invalid)'
        : check === 'unreachable'
          ? 'valid by its expiry; not checked: its server could not be reached'
          : 'valid (by its expiry; not checked)';
  switch (state) {
    case 'none':
      return 'none';
    case 'expired':
      return `expired at ${formatInstant(Date.parse(token?.expiresAt ?? ''))}`;
    case 'no_expiry':
      // The verdict's own parenthesis carries "no expiry": one clause, not two.
      return verdict
        .replace('valid (by its expiry; not checked)', 'valid (no expiry; not checked)')
        .replace(
          /^(active \(token info accepts it\)|refused by token info \(revoked or invalid\)|valid by its expiry; not checked: its server could not be reached)$/,
          '$1, no expiry',
        );
    case 'valid':
      return `${verdict}, ${formatDuration(token === undefined ? 0 : (secondsLeft(token, nowMs) ?? 0))} left (until ${formatInstant(Date.parse(token?.expiresAt ?? ''))})`;
  }
}
