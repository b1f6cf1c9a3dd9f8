import type { StoredToken } from '../store/profile.js';
import { secondsLeft } from '../store/token-state.js';
import { describeLifetime, formatInstant, maskToken } from './format.js';
import type { Output } from './output.js';

/**
 * The JSON document login and client-credentials print (README "JSON output"): access_token,
 * token_type, scope, expires_in (s left at `nowMs`), expires_at, grant, profile.
 */
export function tokenJson(token: StoredToken, profileName: string, nowMs: number): Record<string, unknown> {
  const expiresInSeconds = secondsLeft(token, nowMs);
  return {
    access_token: token.accessToken,
    token_type: token.tokenType,
    scope: token.scope ?? null,
    expires_in: expiresInSeconds ?? null,
    expires_at: token.expiresAt === undefined ? null : formatInstant(Date.parse(token.expiresAt)),
    grant: token.grant,
    profile: profileName,
  };
}

/**
 * reportToken for a token this run has just received (a sign-in, a client credentials grant): its
 * lifetime counted from the moment it arrived, its `obtainedAt` (ISO 8601, ms), so that a slow
 * report never shortens `expires_in`.
 */
export function reportNewToken(
  out: Output,
  token: StoredToken,
  profileName: string,
  isJson: boolean,
  headline: string,
  extraJson: Record<string, unknown> = {},
): void {
  reportToken(out, token, profileName, Date.parse(token.obtainedAt), isJson, headline, extraJson);
}

/**
 * Prints a newly obtained token: tokenJson on stdout with `isJson`, and for people on stderr the
 * `headline`, scope, lifetime (human and absolute) and the masked token; `extraJson` members join
 * the document (login's and client-credentials' `replaced`).
 */
export function reportToken(
  out: Output,
  token: StoredToken,
  profileName: string,
  nowMs: number,
  isJson: boolean,
  headline: string,
  extraJson: Record<string, unknown> = {},
): void {
  if (isJson) out.json({ ...tokenJson(token, profileName, nowMs), ...extraJson });
  out.success(headline);
  out.field('scope', token.scope ?? '(none)');
  out.field('expires', describeLifetime(secondsLeft(token, nowMs), nowMs));
  out.field('token', maskToken(token.accessToken));
}
