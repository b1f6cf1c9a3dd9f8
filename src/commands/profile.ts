import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { judgeStoredToken } from '../store/token-state.js';
import { alignColumns, formatInstant } from '../ui/format.js';
import {
  runProfileCreate,
  runProfileRemove,
  runProfileRename,
  runProfileSet,
  runProfileTrust,
  runProfileUse,
} from './profile-edit.js';
import { withClientOptions, withCommonOptions } from './options.js';
import { describeSelection, selectionForListing } from '../settings/profile-selection.js';

/** Registers `mmauth profile list|use|create|set|rename|remove`; the logic is in runProfileX. */
export function registerProfile(program: Command, ctx: AppContext): void {
  const profile = program
    .command('profile')
    .description('list, select, create, change, rename and remove profiles (several accounts and servers)')
    .addHelpText(
      'after',
      `
Selection, first match wins: --profile, MMAUTH_PROFILE, the nearest .mmauth-profile from the
working directory up, the current profile (profile use), "default".

Examples:
  $ mmauth profile create work --base-url https://maps.example.com --client-id app-123
  $ mmauth login --profile work
  $ mmauth profile use work
  $ mmauth profile use work --directory ~/src/maps-sync
  $ mmauth profile list --json`,
    );
  profile
    .command('list')
    .description('every profile, its server, client, grant and token state, and which one is current and why')
    .option('--json', 'print one JSON document on stdout')
    .option('--names', 'only the names, one a line (for shell completion)')
    .action(async (options) => runProfileList(options, ctx));
  profile
    .command('use')
    .argument('<name>', 'the profile to make current')
    .option('--directory [dir]', 'bind a directory (default: the working one) instead: writes DIR/.mmauth-profile')
    .description('make a profile the current one, or bind a directory to it')
    .action(async (name, options) => runProfileUse(name, options, ctx));
  const settings = (command: Command<[string], Record<string, never>>) =>
    command
      .option('--base-url <url>', 'service base URL, https unless loopback')
      .option('--client-id <id>', 'registered client id')
      .option('--scope <scopes>', 'space-separated scopes to request')
      .option('--redirect-uri <uri>', 'a fixed loopback redirect URI (http://127.0.0.1:PORT/path)')
      .option('--json', 'print one JSON document on stdout');
  settings(profile.command('create').argument('<name>', 'the new profile'))
    .description('a profile with settings and no credentials: `login --profile NAME` then needs no more flags')
    .action(async (name, options) => runProfileCreate(name, options, ctx));
  settings(profile.command('set').argument('<name>', 'the profile to change'))
    .option('--replace', "end the profile's grant first when the change moves it to another server or client")
    .description("change a profile's settings (another origin or client id with credentials needs --replace)")
    .action(async (name, options) => runProfileSet(name, options, ctx));
  profile
    .command('rename')
    .argument('<old>', 'the profile to rename')
    .argument('<new>', 'its new name')
    .description('rename a profile: settings, credentials (re-sealed), pending login and the current pointer follow')
    .action(async (oldName, newName) => runProfileRename(oldName, newName, ctx));
  profile
    .command('trust')
    .argument('[dir]', 'the directory whose .mmauth-profile to approve (default: the working directory)')
    .description("approve a directory's .mmauth-profile: until then a file a repository brings is ignored")
    .action(async (dir) => runProfileTrust(dir, ctx));
  withClientOptions(withCommonOptions(profile.command('remove').argument('<name>', 'the profile to remove')))
    .option('--local-only', 'remove it without ending its grant on the server')
    .description('end the grant as logout does (unless --local-only), then delete the profile entirely')
    .action(async (name, options) => runProfileRemove(name, options, ctx));
}

/** One profile as `profile list --json` prints it. */
export interface ProfileListJson {
  name: string;
  current: boolean;
  base_url: string | null;
  client_id: string | null;
  grant: string | null;
  state: string;
  expires_at: string | null;
  credentials: 'keyring' | 'file' | 'none';
}

/**
 * Lists every profile with the one this run would use and why (selectProfile), from the config
 * file alone (no network, no keyring). --json: `{current, selected_by, directory_file, profiles}`.
 */
export async function runProfileList(options: { json?: boolean; names?: boolean }, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const store = await ctx.openStore();
  if (options.names === true) {
    // Only names a profile may have: a name planted in the file never reaches a shell (attacks N27).
    for (const name of store.names()) if (/^[A-Za-z0-9._-]{1,64}$/.test(name)) out.data(name);
    return;
  }
  // A directory file that fails closed makes no profile current here; the list still shows them all.
  const { selection, refusal } = await selectionForListing(ctx, store);
  const nowMs = ctx.nowMs();
  const profiles = store.list().map(({ name, profile }): ProfileListJson => {
    const hasCredentials = profile.token !== undefined || profile.hasClientSecret;
    return {
      name,
      current: name === selection.name,
      base_url: profile.baseUrl ?? null,
      client_id: profile.clientId ?? null,
      grant: profile.token?.grant ?? null,
      state: judgeStoredToken(profile.token, nowMs),
      expires_at: profile.token?.expiresAt === undefined ? null : formatInstant(Date.parse(profile.token.expiresAt)),
      credentials: hasCredentials ? profile.credentialsIn : 'none',
    };
  });
  const current = profiles.some((p) => p.current) ? selection.name : null;
  if (options.json === true) {
    out.json({
      current,
      selected_by: selection.selectedBy,
      directory_file: selection.directoryFile ?? null,
      profiles,
    });
  }
  if (profiles.length === 0)
    out.info('No profiles yet: `mmauth profile create NAME --base-url URL`, or `mmauth login`.');
  // Columns as wide as their longest cell: long client ids or URLs never shift the next column.
  const rows = profiles.map((p) => [
    `${p.current ? '▸' : ' '} ${p.name}`,
    p.base_url ?? '(no base URL)',
    p.client_id ?? '(no client id)',
    p.state === 'none' ? 'no token' : `${p.grant ?? ''} token ${p.state}`,
    `credentials: ${p.credentials}`,
  ]);
  for (const line of alignColumns(rows)) out.info(line);
  // Never name a profile that does not exist as the current one.
  if (refusal !== undefined) out.warn(`Current: none here: ${refusal.message}`);
  else if (store.listOne(selection.name) === undefined)
    out.info(
      `Current: none (no profile "${selection.name}", ${describeSelection(selection)}): \`mmauth profile use NAME\``,
    );
  // "Current: work (the current profile, mmauth profile use)": one pair of parentheses.
  else
    out.info(
      `Current: ${selection.name} (${describeSelection(selection).replace(' (mmauth profile use)', ', mmauth profile use')})`,
    );
}
