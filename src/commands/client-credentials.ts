import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { requestClientCredentialsToken } from '../oauth/client-credentials.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import { reportToken } from '../ui/token-report.js';
import { endReplacedGrant, storeNewGrant, type ReplacedJson } from '../signin/replaced-grant.js';
import { prepareStoring, type StorageOptions } from '../signin/credential-storage.js';
import { withClientOptions, withCommonOptions, withStorageOption, type ClientOptions } from './options.js';
import { assertMayStore, credentialsFor } from '../grant/credential-binding.js';
import { chooseScope, requireClientId, resolveClientSecret } from '../settings/settings.js';
import { resolveTarget } from '../settings/target.js';
import { toStoredToken } from '../grant/token-record.js';

/** Options of `mmauth client-credentials`. */
export interface ClientCredentialsOptions extends ClientOptions, StorageOptions {
  scope?: string;
  /** false with --no-save. */
  save: boolean;
  /** Replace the profile's token although it is a user token or belongs to another server. */
  replace?: boolean;
}

/** Registers `mmauth client-credentials`; the logic is runClientCredentials. */
export function registerClientCredentials(program: Command, ctx: AppContext): void {
  withStorageOption(withClientOptions(withCommonOptions(program.command('client-credentials'))))
    .description('get a token for the client itself (client credentials grant), no user involved')
    .option('--scope <scopes>', 'space-separated scopes to request (default "service")')
    .option('--no-save', 'print the token only; do not store it in the profile')
    .option(
      '--replace',
      "replace the profile's token even if it is a user's or another server's (its old credentials are dropped)",
    )
    .addHelpText(
      'after',
      `
Examples:
  $ MMAUTH_CLIENT_SECRET=… mmauth client-credentials --base-url https://maps.example.com --client-id abc123
  $ mmauth client-credentials --client-secret-file ./secret --no-save --json | jq -r .access_token`,
    )
    .action(async (options) => runClientCredentials(options, ctx));
}

/**
 * The client credentials grant (RFC 6749 §4.4; spec §4.2 behaviour 2): asks the token endpoint
 * with the client's id, secret and `scope`; stores base URL, client id, secret, scope and token
 * unless `save` is false; a user's token or another server's is replaced only with `replace`.
 * Nothing is stored on failure. Throws settings, network, malformed-answer
 * and `token_endpoint_error` errors.
 */
export async function runClientCredentials(options: ClientCredentialsOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const target = await resolveTarget(options, ctx, { getsCredentials: true });
  const { endpoints, profile, profileName } = target;
  const clientId = await requireClientId(options.clientId, ctx, profile);
  const scope = await chooseScope(options.scope, profile, DEFAULT_SCOPE, ctx);
  if (options.save)
    assertMayStore(profileName, profile, endpoints.baseUrl, 'client_credentials', options.replace === true);
  const intent = options.save ? await prepareStoring(options, target.store, profileName, out) : {};
  const usable = options.replace === true ? credentialsFor(profile, endpoints.baseUrl) : profile;
  const clientSecret = await resolveClientSecret(options, ctx, { ...target, profile: usable, clientId });
  const response = await requestClientCredentialsToken(target.server, clientId, clientSecret, scope);
  const nowMs = ctx.nowMs();
  const token = toStoredToken(response, 'client_credentials', nowMs, scope);
  let replaced: ReplacedJson = null;
  if (options.save) {
    const former = await storeNewGrant(
      target.store,
      profileName,
      token,
      () => ({ baseUrl: endpoints.baseUrl, clientId, clientSecret, scope }),
      nowMs,
      intent,
    );
    replaced = await endReplacedGrant(
      former,
      token,
      { ...options, clientId, clientSecret },
      ctx,
      out,
      endpoints.baseUrl,
    );
  }
  const where = options.save ? ` (stored in profile "${profileName}")` : ' (not stored)';
  reportToken(
    out,
    token,
    profileName,
    nowMs,
    options.json === true,
    `Got a client credentials token from ${endpoints.baseUrl}${where}`,
    // Nothing stored: no profile holds this token (and `default` may belong to another client).
    options.save ? { replaced } : { replaced, profile: null },
  );
}
