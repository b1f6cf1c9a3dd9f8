import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { requireTokenInfo } from '../oauth/token-info.js';
import { describeLifetime, formatInstant, maskToken } from '../ui/format.js';
import { selectAccessToken } from './shared/access-token.js';
import { withCommonOptions, type CommonOptions } from './shared/options.js';
import { resolveTarget } from './shared/target.js';

/** Registers `mmauth info`; the logic is runInfo. */
export function registerInfo(program: Command, ctx: AppContext): void {
  withCommonOptions(program.command('info'))
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

/**
 * Asks token info (spec §4.3) about the profile's token or MMAUTH_TOKEN and prints owner id,
 * scopes, remaining lifetime, application uid and the masked token; --json prints
 * `{resource_owner_id, scope[], expires_in, expires_at, application: {uid}, created_at}`.
 * Throws `not_logged_in`, `token_inactive` (401), network and malformed-answer errors.
 */
export async function runInfo(options: CommonOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { needsStoredToken: true });
  const { accessToken } = selectAccessToken(ctx, target.profileName, target.profile, target.endpoints.baseUrl);
  const info = await requireTokenInfo(target.server, accessToken);
  const nowMs = ctx.nowMs();
  if (options.json === true) {
    out.json({
      resource_owner_id: info.resourceOwnerId,
      scope: info.scopes,
      expires_in: info.expiresInSeconds,
      expires_at: info.expiresInSeconds === null ? null : formatInstant(nowMs + info.expiresInSeconds * 1000),
      application: { uid: info.applicationUid },
      created_at: info.createdAt ?? null,
    });
  }
  out.success(`Token is active on ${target.endpoints.baseUrl}`);
  out.field('owner', info.resourceOwnerId === null ? '(none: client token)' : String(info.resourceOwnerId));
  out.field('scopes', info.scopes.length === 0 ? '(none)' : info.scopes.join(' '));
  out.field('expires', describeLifetime(info.expiresInSeconds, nowMs));
  out.field('application', info.applicationUid === null ? '(none)' : String(info.applicationUid));
  out.field('token', maskToken(accessToken));
}
