import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { requireTokenInfo } from '../oauth/token-info.js';
import { describeLifetime, formatInstant, maskToken } from '../ui/format.js';
import { openSession, requireToken, withCommonOptions, type CommonOptions } from './common.js';

/** Options of `mmauth info`. */
export type InfoOptions = CommonOptions;

/** Registers `mmauth info`; the logic is runInfo. */
export function registerInfo(program: Command, ctx: AppContext): void {
  withCommonOptions(program.command('info'))
    .description("show what the server says of the stored token (or MMAUTH_TOKEN): owner, scopes, lifetime, application")
    .addHelpText('after', `
Examples:
  $ mmauth info
  $ mmauth info --profile work --json
  $ MMAUTH_TOKEN=… mmauth info --base-url https://maps.example.com`)
    .action(async (options) => runInfo(options, ctx));
}

/**
 * Asks token info (spec §4.3) about the profile's token or MMAUTH_TOKEN and prints owner id,
 * scopes, remaining lifetime (human and absolute), application uid and the masked token; --json
 * prints `{resource_owner_id, scope[], expires_in, expires_at, application: {uid}, created_at}`.
 * Errors: AuthError (4) when not logged in or the server answers 401; NetworkError (3); ServerError (1).
 */
export async function runInfo(options: InfoOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { accessToken } = requireToken(ctx, session.profileName, session.profile);
  const info = await requireTokenInfo(session.peer, accessToken);
  const nowMs = ctx.nowMs();
  if (options.json === true) {
    out.json({
      resource_owner_id: info.resourceOwnerId,
      scope: info.scopes,
      expires_in: info.expiresInS,
      expires_at: info.expiresInS === null ? null : formatInstant(nowMs + info.expiresInS * 1000),
      application: { uid: info.applicationUid },
      created_at: info.createdAt ?? null,
    });
  }
  out.success(`Token is active on ${session.endpoints.baseUrl}`);
  out.field('owner', info.resourceOwnerId === null ? '(none: client token)' : String(info.resourceOwnerId));
  out.field('scopes', info.scopes.length === 0 ? '(none)' : info.scopes.join(' '));
  out.field('expires', describeLifetime(info.expiresInS, nowMs));
  out.field('application', info.applicationUid === null ? '(none)' : String(info.applicationUid));
  out.field('token', maskToken(accessToken));
}
