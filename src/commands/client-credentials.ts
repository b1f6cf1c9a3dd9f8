import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { requestClientCredentialsToken } from '../oauth/client-credentials.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import { openSession, reportToken, chooseScope, requireClientId, resolveClientSecret, toStoredToken, withClientOptions, withCommonOptions, type ClientOptions } from './common.js';

/** Options of `mmauth client-credentials`. */
export interface ClientCredentialsOptions extends ClientOptions {
  scope?: string;
  /** false with --no-save. */
  save: boolean;
}

/** Registers `mmauth client-credentials`; the logic is runClientCredentials. */
export function registerClientCredentials(program: Command, ctx: AppContext): void {
  withClientOptions(withCommonOptions(program.command('client-credentials')))
    .description('get a token for the client itself (client credentials grant), no user involved')
    .option('--scope <scopes>', 'space-separated scopes to request (default "service")')
    .option('--no-save', 'print the token only; do not store it in the profile')
    .addHelpText('after', `
Examples:
  $ MMAUTH_CLIENT_SECRET=… mmauth client-credentials --base-url https://maps.example.com --client-id abc123
  $ mmauth client-credentials --client-secret-file ./secret --no-save --json | jq -r .access_token`)
    .action(async (options) => runClientCredentials(options, ctx));
}

/**
 * The client credentials grant (spec §4.2 behaviour 2; RFC 6749 §4.4): asks the token endpoint
 * with client_id/client_secret in the body and `scope`; stores base URL, client id, secret, scope
 * and token unless `save` is false. Nothing is stored on failure. Errors: UsageError (2),
 * NetworkError (3), AuthError invalid_client (4), ServerError (1).
 */
export async function runClientCredentials(options: ClientCredentialsOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const session = await openSession(options, ctx);
  const { endpoints, profile, profileName } = session;
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const scope = await chooseScope(options.scope, profile, DEFAULT_SCOPE, ctx);
  const clientSecret = await resolveClientSecret(options, ctx, profile);
  const response = await requestClientCredentialsToken(session.peer, clientId, clientSecret, scope);
  const nowMs = ctx.nowMs();
  const token = toStoredToken(response, 'client_credentials', nowMs, scope);
  if (options.save) {
    await session.store.update(profileName, (current) => ({ ...current, baseUrl: endpoints.baseUrl, clientId, clientSecret, scope, token }));
  }
  reportToken(out, token, profileName, nowMs, options.json === true, `Got a client credentials token from ${endpoints.baseUrl}${options.save ? ` (stored in profile "${profileName}")` : ' (not stored)'}`);
}
