import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { describeLifetime, formatInstant, maskToken } from '../ui/format.js';
import { withCommonOptions, type CommonOptions } from './options.js';
import { resolveTarget } from '../settings/target.js';
import { withoutAgent } from './local-only-notice.js';

/** Registers `mmauth info`; the logic is runInfo. */
export function registerInfo(program: Command, ctx: AppContext): void {
  withCommonOptions(program.command('info'))
    .option('--no-renew', 'ask about the stored token as it is, even when it is stale (no renewal first)')
    .description(
      'show what the server says of the stored token (or MMAUTH_TOKEN): owner, scopes, lifetime, application',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth info
  $ mmauth info --profile work --json
  $ MMAUTH_TOKEN=… mmauth info --base-url https://maps.example.com`,
    )
    .action(async (options) => runInfo(options, ctx));
}

/** Options of `mmauth info`. */
export interface InfoOptions extends CommonOptions {
  /** false with --no-renew: never renew a stale token first. */
  renew?: boolean;
}

/**
 * Asks token info (spec §4.3) about the profile's token or MMAUTH_TOKEN and prints owner id,
 * scopes, remaining lifetime, application uid and the masked token; --json prints
 * `{resource_owner_id, scope[], expires_in, expires_at, application: {uid}, created_at}` (times ISO
 * 8601). A locally stale token that can renew is renewed first, as `token` does (the project's rules;
 * `--no-renew` not to); a locally valid token the server refuses is reported, not renewed around.
 * Throws `not_logged_in`, `token_inactive` (401), network and malformed-answer errors.
 */
export async function runInfo(options: InfoOptions, given: AppContext): Promise<void> {
  // This machine's own profile: a token from an agent never goes to the server named here.
  const ctx = withoutAgent(given);
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { needsStoredToken: true });
  const { askTokenInfo } = await import('../token/profile-token-info.js');
  const { accessToken, info } = await askTokenInfo(target, options, ctx, (line) => out.warn(line));
  const nowMs = ctx.nowMs();
  if (options.json === true) {
    out.json({
      resource_owner_id: info.resourceOwnerId,
      scope: info.scopes,
      expires_in: info.expiresInSeconds,
      expires_at: info.expiresInSeconds === null ? null : formatInstant(nowMs + info.expiresInSeconds * 1000),
      application: { uid: info.applicationUid },
      created_at: info.createdAt === undefined ? null : formatInstant(info.createdAt * 1000),
    });
  }
  out.success(`Token is active on ${target.endpoints.baseUrl}`);
  out.field('owner', info.resourceOwnerId === null ? '(none: client token)' : String(info.resourceOwnerId));
  out.field('scopes', info.scopes.length === 0 ? '(none)' : info.scopes.join(' '));
  out.field('expires', describeLifetime(info.expiresInSeconds, nowMs));
  out.field('application', info.applicationUid === null ? '(none)' : String(info.applicationUid));
  out.field('token', maskToken(accessToken));
}
