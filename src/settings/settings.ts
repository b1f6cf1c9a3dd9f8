import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { resolveEndpoints } from '../oauth/endpoints.js';
import { normalizeScope } from '../oauth/parse.js';
import { KNOWN_SCOPES } from '../oauth/wire.js';
import type { Profile } from '../store/profile.js';
import { isVisibleWord } from '../util/visible-word.js';
import { assertCredentialOrigin, isSecretForClient } from '../grant/credential-binding.js';
import type { SecretOptions } from './setting-options.js';

/** Flag > environment > stored profile: the first non-empty value, trimmed. */
export function pickSetting(
  flag: string | undefined,
  fromEnv: string | undefined,
  stored: string | undefined,
): string | undefined {
  for (const value of [flag, fromEnv, stored]) {
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** Whether to trace HTTP and show stack traces: --verbose anywhere in argv, or MMAUTH_DEBUG=1. */
export function isVerbose(options: { verbose?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return options.verbose === true || env.MMAUTH_DEBUG === '1';
}

/** The trace of HTTP exchanges for a verbose run (--verbose or MMAUTH_DEBUG=1), on stderr; undefined otherwise. */
export async function traceFor(
  options: { verbose?: boolean },
  ctx: AppContext,
): Promise<((line: string) => void) | undefined> {
  if (!isVerbose(options, ctx.env)) return undefined;
  const out = await ctx.output();
  return (line: string) => out.debug(line);
}

/**
 * The base URL: flag > MMAUTH_BASE_URL > profile > a prompt on a terminal. Throws `no_base_url`
 * when there is none and mmauth may not prompt.
 */
export async function requireBaseUrl(
  flag: string | undefined,
  ctx: AppContext,
  profile: Profile | undefined,
): Promise<string> {
  const baseUrl = pickSetting(flag, ctx.env.MMAUTH_BASE_URL, profile?.baseUrl);
  if (baseUrl !== undefined) return baseUrl;
  if (!ctx.prompter.canPrompt) {
    throw new MmauthError('no_base_url', 'no base URL', {
      hint: 'pass --base-url https://host or set MMAUTH_BASE_URL',
    });
  }
  return ctx.prompter.text('Service base URL (https://…):', '--base-url URL or MMAUTH_BASE_URL', (value) => {
    try {
      resolveEndpoints(value);
      return true;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  });
}

/**
 * The client id: flag > MMAUTH_CLIENT_ID > profile > a prompt on a terminal. Throws `no_client_id`
 * naming the flag and the variable when it is absent and mmauth may not prompt.
 */
export async function requireClientId(
  flag: string | undefined,
  ctx: AppContext,
  profile: Profile | undefined,
): Promise<string> {
  const clientId = pickSetting(flag, ctx.env.MMAUTH_CLIENT_ID, profile?.clientId);
  if (clientId !== undefined) return clientId;
  if (!ctx.prompter.canPrompt) {
    throw new MmauthError('no_client_id', 'no client id', { hint: 'pass --client-id ID or set MMAUTH_CLIENT_ID' });
  }
  return ctx.prompter.text(
    'Client id (from the app registration):',
    '--client-id ID or MMAUTH_CLIENT_ID',
    (value) => isVisibleWord(value) || 'a client id is printable ASCII without spaces',
  );
}

const SECRET_SOURCES = 'MMAUTH_CLIENT_SECRET, --client-secret-file PATH or --client-secret-stdin';

/** Where a stored secret would go: the profile, its name, the base URL and client id of this run. */
export interface SecretTarget {
  profileName: string;
  profile: Profile | undefined;
  endpoints: { baseUrl: string };
  /** The client id this run authenticates as; a stored secret of another client is never used. */
  clientId?: string | undefined;
}

/** Warns, as ssh does for a key, when a secret file is readable by the group or others (attacks: a secret's file is one more copy). */
async function warnIfShared(path: string, ctx: AppContext): Promise<void> {
  const { statSync } = await import('node:fs');
  const mode = (() => {
    try {
      return statSync(path).mode & 0o777;
    } catch {
      return undefined;
    }
  })();
  if (mode === undefined || (mode & 0o077) === 0) return;
  const octal = mode.toString(8).padStart(4, '0');
  (await ctx.output()).warn(
    `the client secret file ${path} is readable by others (mode ${octal}): \`chmod 600 ${path}\``,
  );
}

/**
 * The client secret if one is given: --client-secret-file > --client-secret-stdin >
 * MMAUTH_CLIENT_SECRET > the stored profile (only to its own origin: `base_url_mismatch`; only
 * with the client id it was stored with: isSecretForClient);
 * undefined when none is (a public client, RFC 6749 §2.1). Trailing newlines dropped. Throws
 * `unreadable_secret_file` or `invalid_client_secret` (empty or several lines).
 */
export async function findClientSecret(
  options: SecretOptions,
  ctx: AppContext,
  target: SecretTarget,
): Promise<string | undefined> {
  let secret: string | undefined;
  if (options.clientSecretFile !== undefined) {
    try {
      secret = await ctx.readTextFile(options.clientSecretFile);
    } catch (error) {
      throw new MmauthError(
        'unreadable_secret_file',
        `cannot read the client secret file ${options.clientSecretFile}`,
        {
          cause: error,
        },
      );
    }
    await warnIfShared(options.clientSecretFile, ctx);
  } else if (options.clientSecretStdin === true) {
    secret = await ctx.readStdin();
  } else {
    secret = pickSetting(undefined, ctx.env.MMAUTH_CLIENT_SECRET, undefined);
    const profile = target.profile;
    const isOwnClient = profile !== undefined && isSecretForClient(profile, target.clientId ?? profile.clientId);
    const stored = isOwnClient ? pickSetting(undefined, undefined, profile.clientSecret) : undefined;
    if (secret === undefined && stored !== undefined) {
      assertCredentialOrigin(target.profileName, target.profile, target.endpoints.baseUrl);
      secret = stored;
    }
    if (secret === undefined) return undefined;
  }
  const checked = checkSecret(secret);
  // Known now: no message, hint or JSON error of this run may print it (a server may echo it).
  ctx.secrets.remember(checked);
  return checked;
}

/**
 * Asks for the client secret with a masked prompt (a terminal only), and remembers it among the
 * run's secrets: client-credentials with none given, or the login whose public attempt the server
 * refused. Throws `prompt_unavailable` or `invalid_client_secret`.
 */
export async function askClientSecret(ctx: AppContext): Promise<string> {
  const secret = checkSecret(await ctx.prompter.secret('Client secret:', SECRET_SOURCES));
  ctx.secrets.remember(secret);
  return secret;
}

function checkSecret(raw: string): string {
  const secret = raw.replace(/[\r\n]+$/, '');
  if (secret === '' || /[\r\n]/.test(secret)) {
    throw new MmauthError('invalid_client_secret', 'the client secret is empty or spans several lines', {
      hint: `provide it with ${SECRET_SOURCES}`,
    });
  }
  return secret;
}

/**
 * The client secret a confidential client must have (client credentials, RFC 6749 §4.4):
 * findClientSecret, else a masked prompt on a terminal. Throws what findClientSecret throws, or
 * `prompt_unavailable` naming the flags and the variable.
 */
export async function resolveClientSecret(
  options: SecretOptions,
  ctx: AppContext,
  target: SecretTarget,
): Promise<string> {
  return (await findClientSecret(options, ctx, target)) ?? askClientSecret(ctx);
}

/**
 * The scope to request: flag > profile > a checkbox of the spec's known scopes (§2.5) on a
 * terminal > `fallback`. Space-separated; commas refused (`invalid_scope_syntax`).
 */
export async function chooseScope(
  flag: string | undefined,
  profile: Profile | undefined,
  fallback: string,
  ctx: AppContext,
): Promise<string> {
  if (pickSetting(flag, undefined, profile?.scope) !== undefined || !ctx.prompter.canPrompt) {
    return resolveScope(flag, profile, fallback);
  }
  const fallbackScopes = new Set(fallback.split(' '));
  const ticked = await ctx.prompter.checkbox(
    'Scopes to request:',
    KNOWN_SCOPES.map((value) => ({ value, isChecked: fallbackScopes.has(value) })),
    '--scope "service userinfo.email"',
  );
  return normalizeScope(ticked.join(' '));
}

/** The scope to request: flag > profile > `fallback` (RFC 6749 §3.3, space-separated; commas refused). */
export function resolveScope(flag: string | undefined, profile: Profile | undefined, fallback: string): string {
  const scope = normalizeScope(pickSetting(flag, undefined, profile?.scope) ?? fallback);
  if (scope.includes(',')) {
    throw new MmauthError(
      'invalid_scope_syntax',
      `invalid scope "${scope}": scopes are separated by spaces, not commas`,
      {
        hint: 'e.g. --scope "service userinfo.email"',
      },
    );
  }
  return scope;
}

/**
 * The token agent's socket (`MMAUTH_AGENT_SOCK`, the project's rules), or undefined when none is named:
 * with one, the agent is the only source of tokens and no local credentials are read.
 */
export function agentSocketOf(env: NodeJS.ProcessEnv): string | undefined {
  return pickSetting(undefined, env.MMAUTH_AGENT_SOCK, undefined);
}
