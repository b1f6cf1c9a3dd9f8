import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { agentSocketOf } from '../settings/settings.js';
import { MmauthError } from '../errors.js';
import { LOST_KEY } from '../store/credential-vault.js';
import { formatInstant, maskToken } from '../ui/format.js';
import { nextStep } from '../settings/next-step.js';
import { secondsLeft } from '../store/token-state.js';
import { MAX_TIMER_SECONDS, parseSeconds, withLocalOptions, type LocalOptions } from './options.js';
import { renewalOf, type RenewalKind } from '../grant/renewal.js';
import { describeState, obtainedWords } from '../token/token-words.js';

const RENEWAL_WORDS: Record<RenewalKind, string> = {
  refresh_token: 'refresh token',
  client_credentials: 'client credentials',
  none: 'none',
};
import { describeSelection, selectProfile } from '../settings/profile-selection.js';
import { requireProfile } from '../settings/target.js';
import { serverMetadataJson, type ProfileStatusJson } from './status-json.js';

/** Options of `mmauth status`. */
export interface StatusOptions extends LocalOptions {
  /** Ask token info about each stored token. */
  check?: boolean;
  /** Seconds, for --check's requests. */
  timeout: number;
}

/** Registers `mmauth status`; the logic is runStatus. */
export function registerStatus(program: Command, ctx: AppContext): void {
  withLocalOptions(program.command('status'))
    .option('--check', "ask the server's token info about each stored token (active or refused)")
    .option('--timeout <seconds>', 'bound on each --check request', parseSeconds(1, MAX_TIMER_SECONDS), 30)
    .description(
      'list every profile: base URL, client id, grant, scopes, token state, stored secret (exit 4 when the selected profile has no valid token)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth status
  $ mmauth status --profile ci --json | jq '.profiles[] | select(.selected) | .state'
  $ mmauth status --check`,
    )
    .action(async (options) => runStatus(options, ctx));
}

/**
 * Lists every stored profile (the selected one marked) and the config file path, from the store
 * alone, or with `check` asking token info about each token (checkStoredTokens). --json prints
 * `{config_file, selected, profiles: ProfileStatusJson[]}`. Throws `not_logged_in` or `token_expired` after
 * printing when the selected profile has no usable token (none, or expired with nothing to renew it:
 * an expired token that renews on next use exits 0 and names `mmauth refresh`).
 */
export async function runStatus(options: StatusOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const agentSocket = agentSocketOf(ctx.env);
  if (agentSocket !== undefined) {
    const { runAgentStatus } = await import('./agent/agent-status.js');
    return runAgentStatus(agentSocket, options, ctx, out);
  }
  const store = await ctx.openStore();
  const selection = await selectProfile(options.profile, ctx, store);
  const selected = selection.name;
  const nowMs = ctx.nowMs();
  // --profile NAME shows that profile only (and says when it does not exist); without it, every profile.
  const profiles = store.list().filter(({ name }) => options.profile === undefined || name === selected);
  if (options.profile !== undefined && profiles.length === 0) {
    requireProfile({ profile: undefined, profileName: selected, store, selection });
  }
  const { profileStatuses } = await import('../token/profile-status.js');
  const { rows, unreachable } = await profileStatuses(
    store,
    profiles,
    { check: options.check === true, timeoutSeconds: options.timeout, selected },
    ctx,
  );
  if (options.json === true) {
    out.json({
      config_file: store.path,
      selected,
      selected_by: selection.selectedBy,
      directory_file: selection.directoryFile ?? null,
      profiles: rows.map(({ name, profile, state, check, lost }): ProfileStatusJson => {
        const token = profile.token;
        return {
          name,
          selected: name === selected,
          base_url: profile.baseUrl ?? null,
          client_id: profile.clientId ?? null,
          grant: token?.grant ?? null,
          flow: token === undefined ? null : token.viaDevice === true ? 'device' : null,
          scope: token?.scope ?? profile.scope ?? null,
          state,
          expires_in: token === undefined ? null : (secondsLeft(token, nowMs) ?? null),
          expires_at: token?.expiresAt === undefined ? null : formatInstant(Date.parse(token.expiresAt)),
          obtained_at: token === undefined ? null : formatInstant(Date.parse(token.obtainedAt)),
          has_client_secret: profile.hasClientSecret,
          check,
          credentials_lost: lost !== undefined,
          has_refresh_token: profile.token?.hasRefreshToken === true,
          renewal: renewalOf(profile, ctx.env),
          credential_store: profile.credentialsIn,
          server_metadata: serverMetadataJson(profile.serverMetadata),
        };
      }),
    });
  }
  out.info(`Config file: ${store.path}`);
  out.info(`Profile: ${selected} (${describeSelection(selection)})`);
  if (rows.length === 0) {
    out.info('No profiles yet.');
  }
  for (const { name, profile, state, check, lost } of rows) {
    out.info('');
    out.info(`${name === selected ? '▸' : ' '} ${name}${name === selected ? ' (selected)' : ''}`);
    out.field('base URL', profile.baseUrl ?? '(not set)');
    out.field('client id', profile.clientId ?? '(not set)');
    out.field(
      'grant',
      `${profile.token?.grant ?? '(no token)'}${profile.token?.viaDevice === true ? ' (signed in from another device)' : ''}`,
    );
    out.field('scopes', profile.token?.scope ?? profile.scope ?? '(not set)');
    out.field(
      'token',
      state === 'none'
        ? 'none'
        : lost !== undefined
          ? LOST_KEY
          : `${describeState(state, profile, nowMs, check)}   ${profile.token?.plainAccessToken === undefined ? '(sealed)' : maskToken(profile.token.plainAccessToken)}`,
    );
    if (profile.token !== undefined) out.field('obtained', obtainedWords(profile.token.obtainedAt, nowMs));
    out.field('client secret', profile.hasClientSecret ? (lost === undefined ? 'stored' : LOST_KEY) : 'not stored');
    out.field(
      'credentials',
      !profile.hasClientSecret && profile.token === undefined
        ? 'none stored'
        : profile.credentialsIn === 'keyring'
          ? `sealed in the file, the key in the ${store.keyringName}`
          : 'in the file, plain text',
    );
    out.field('renews with', RENEWAL_WORDS[renewalOf(profile, ctx.env)]);
    const metadata = serverMetadataJson(profile.serverMetadata);
    if (metadata !== null)
      out.field(
        'endpoints',
        `token ${metadata.token_endpoint ?? '(default)'}, authorize ${metadata.authorization_endpoint ?? '(default)'} (RFC 8414 metadata of ${metadata.issuer}${metadata.iss_required ? '; iss required' : ''})`,
      );
    if (lost !== undefined) out.field('to fix', `run \`${nextStep(profile.lastGrant, name)}\` to store them again`);
  }
  const current = rows.find((row) => row.name === selected);
  // Every profile is listed first; the selected one's server not answering is the run's failure (exit 3).
  if (unreachable !== undefined) throw unreachable;
  if (current?.lost !== undefined) throw current.lost;
  if (current?.check === 'refused') {
    throw new MmauthError(
      'token_inactive',
      `the token of the selected profile "${selected}" is refused by token info`,
      {
        hint: `run \`${nextStep(current.profile.lastGrant, selected)}\``,
      },
    );
  }
  if (current?.state === 'expired' && renewalOf(current.profile, ctx.env) !== 'none') {
    // Usable: the next token, header, api or exec renews it (exit 0, README's exit-code table).
    const flag = selected === 'default' ? '' : ` --profile ${selected}`;
    out.info(
      `The token of "${selected}" has expired; it renews on next use (\`mmauth refresh${flag}\` renews it now).`,
    );
    return;
  }
  if (current === undefined || (current.state !== 'valid' && current.state !== 'no_expiry')) {
    const what =
      current === undefined ? 'does not exist' : current.state === 'none' ? 'has no token' : 'has an expired token';
    const code = current?.state === 'expired' ? 'token_expired' : 'not_logged_in';
    throw new MmauthError(code, `the selected profile "${selected}" ${what}`, {
      hint: `run \`${nextStep(current?.profile.lastGrant, selected)}\``,
    });
  }
}
