import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { reportNewToken } from '../ui/token-report.js';
import type { ClientGrantOptions } from '../signin/client-credentials.js';
import { withClientOptions, withCommonOptions, withStorageOption } from './options.js';

/** Options of `mmauth client-credentials`. */
export type ClientCredentialsOptions = ClientGrantOptions;

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
 * `mmauth client-credentials`: the client credentials grant (obtainClientGrant: RFC 6749 §4.4,
 * stored unless --no-save), reported as `login` does. Throws what obtainClientGrant throws.
 */
export async function runClientCredentials(options: ClientCredentialsOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { obtainClientGrant } = await import('../signin/client-credentials.js');
  const { token, profileName, baseUrl, replaced } = await obtainClientGrant(options, ctx, out);
  const where = options.save ? ` (stored in profile "${profileName}")` : ' (not stored)';
  reportNewToken(
    out,
    token,
    profileName,
    options.json === true,
    `Got a client credentials token from ${baseUrl}${where}`,
    // Nothing stored: no profile holds this token (and `default` may belong to another client).
    options.save ? { replaced } : { replaced, profile: null },
  );
}
