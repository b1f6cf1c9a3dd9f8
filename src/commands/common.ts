import { InvalidArgumentError, type Command, type OptionValues } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { AuthError, UsageError } from '../errors.js';
import { resolveEndpoints, type Endpoints } from '../oauth/endpoints.js';
import { normalizeScope, type TokenResponse } from '../oauth/parse.js';
import { KNOWN_SCOPES } from '../oauth/wire.js';
import type { OAuthPeer } from '../oauth/peer.js';
import { assertProfileName, type Grant, type Profile, type StoredToken } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { describeLifetime, formatInstant, maskToken } from '../ui/format.js';
import type { Output } from '../ui/output.js';

/** Options every client command has. */
export interface CommonOptions {
  baseUrl?: string;
  profile?: string;
  /** Seconds. */
  timeout: number;
  json?: boolean;
  verbose?: boolean;
}

/** Parses a whole number of seconds for commander; `min` is the smallest accepted value. */
export function parseSeconds(min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > 86_400 * 365) {
      throw new InvalidArgumentError(`expected a whole number of seconds ≥ ${min}`);
    }
    return Number(value);
  };
}

/** Adds --base-url, --profile, --timeout, --json and --verbose (the contract's common options). */
export function withCommonOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(command: Command<A, O, G>) {
  return command
    .option('--base-url <url>', 'service base URL, https unless loopback (env MMAUTH_BASE_URL)')
    .option('--profile <name>', 'profile to use (env MMAUTH_PROFILE; default "default")')
    .option('--timeout <seconds>', 'bound on each HTTP request', parseSeconds(1), 30)
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'trace every HTTP exchange (secrets redacted) and show stack traces (env MMAUTH_DEBUG=1)');
}

/** Options of a command that reads only the local store: --profile, --json, --verbose. */
export interface LocalOptions {
  profile?: string;
  json?: boolean;
  verbose?: boolean;
}

/** Adds --profile, --json and --verbose: the options of commands that never reach the network. */
export function withLocalOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(command: Command<A, O, G>) {
  return command
    .option('--profile <name>', 'profile to use (env MMAUTH_PROFILE; default "default")')
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'show stack traces on errors (env MMAUTH_DEBUG=1)');
}

/** Options of `token` and `header`: local options plus --min-ttl. */
export interface UsableTokenOptions extends LocalOptions {
  /** Seconds the token must still be valid for; 0 accepts any unexpired token. */
  minTtl: number;
}

/** Adds the local options and --min-ttl (for `token` and `header`). */
export function withUsableTokenOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(command: Command<A, O, G>) {
  return withLocalOptions(command).option('--min-ttl <seconds>', 'fail unless the token is valid for at least this many more seconds', parseSeconds(0), 0);
}

/** Adds --client-id, --client-secret-file and --client-secret-stdin. No option takes the secret itself. */
export function withClientOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(command: Command<A, O, G>) {
  return command
    .option('--client-id <id>', 'registered client id (env MMAUTH_CLIENT_ID)')
    .option('--client-secret-file <path>', 'read the client secret from this file (or set MMAUTH_CLIENT_SECRET)')
    .option('--client-secret-stdin', 'read the client secret from standard input');
}

/** Flag > environment > stored profile: the first non-empty value. */
export function pickSetting(flag: string | undefined, fromEnv: string | undefined, stored: string | undefined): string | undefined {
  for (const value of [flag, fromEnv, stored]) {
    if (value !== undefined && value.trim() !== '') {
      return value.trim();
    }
  }
  return undefined;
}

/** The selected profile's name: --profile > MMAUTH_PROFILE > `default`. Throws UsageError. */
export function resolveProfileName(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return assertProfileName(pickSetting(flag, env.MMAUTH_PROFILE, undefined) ?? 'default');
}

/** The selected profile and the store it lives in, without resolving a base URL. */
export interface LocalSession {
  profileName: string;
  /** The stored profile, undefined when there is none yet. */
  profile: Profile | undefined;
  store: ProfileStore;
}

/** Opens the store and reads the selected profile (--profile > MMAUTH_PROFILE > default). */
export async function openLocalSession(options: { profile?: string }, ctx: AppContext): Promise<LocalSession> {
  const profileName = resolveProfileName(options.profile, ctx.env);
  const store = await ctx.openStore();
  return { profileName, store, profile: store.read(profileName) };
}

/** Resolved settings of a client command: profile, store, endpoints and transport. */
export interface Session {
  profileName: string;
  /** The stored profile, undefined when there is none yet. */
  profile: Profile | undefined;
  store: ProfileStore;
  endpoints: Endpoints;
  peer: OAuthPeer;
}

/**
 * Opens the store, reads the selected profile and resolves the base URL (flag > MMAUTH_BASE_URL >
 * profile), checking https-unless-loopback. Throws UsageError (exit 2) when there is no base URL.
 */
export async function openSession(options: CommonOptions, ctx: AppContext): Promise<Session> {
  const profileName = resolveProfileName(options.profile, ctx.env);
  const store = await ctx.openStore();
  const profile = store.read(profileName);
  let baseUrl = pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, profile?.baseUrl);
  if (baseUrl === undefined) {
    if (!ctx.prompter.canPrompt) {
      throw new UsageError('no base URL', { hint: 'pass --base-url https://host or set MMAUTH_BASE_URL' });
    }
    baseUrl = await ctx.prompter.text('Service base URL (https://…):', '--base-url URL or MMAUTH_BASE_URL', (value) => {
      try {
        resolveEndpoints(value);
        return true;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    });
  }
  const endpoints = resolveEndpoints(baseUrl);
  const out = await ctx.output();
  const trace = isDebug(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
  return { profileName, profile, store, endpoints, peer: { endpoints, fetch: ctx.http(options.timeout * 1000, trace).fetch } };
}

/** Whether to trace HTTP and show stack traces: --verbose or MMAUTH_DEBUG=1. */
export function isDebug(options: { verbose?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return options.verbose === true || env.MMAUTH_DEBUG === '1';
}

/**
 * The client id: flag > MMAUTH_CLIENT_ID > profile > a prompt on a TTY. Throws UsageError (exit 2)
 * naming the flag and the variable when it is absent and mmauth may not prompt.
 */
export async function requireClientId(flag: string | undefined, ctx: AppContext, profile: Profile | undefined): Promise<string> {
  const clientId = pickSetting(flag, ctx.env.MMAUTH_CLIENT_ID, profile?.clientId);
  if (clientId !== undefined) {
    return clientId;
  }
  if (!ctx.prompter.canPrompt) {
    throw new UsageError('no client id', { hint: 'pass --client-id ID or set MMAUTH_CLIENT_ID' });
  }
  return ctx.prompter.text('Client id (from the app registration):', '--client-id ID or MMAUTH_CLIENT_ID', (value) =>
    /^[\x21-\x7e]+$/.test(value) || 'a client id is printable ASCII without spaces',
  );
}

/** Options that can carry the client secret (never as an argv value). */
export interface SecretOptions {
  clientSecretFile?: string;
  clientSecretStdin?: boolean;
}

/** Options of a command that authenticates as the client: common + client id + secret sources. */
export interface ClientOptions extends CommonOptions, SecretOptions {
  clientId?: string;
}

const SECRET_SOURCES = 'MMAUTH_CLIENT_SECRET, --client-secret-file PATH or --client-secret-stdin';

/**
 * The client secret: --client-secret-file > --client-secret-stdin > MMAUTH_CLIENT_SECRET > the
 * stored profile > a masked prompt on a TTY. Trailing newlines are dropped. Throws UsageError
 * (exit 2) when both flags are given, the value is empty, or it is missing with no TTY to ask on.
 */
export async function resolveClientSecret(options: SecretOptions, ctx: AppContext, profile: Profile | undefined): Promise<string> {
  if (options.clientSecretFile !== undefined && options.clientSecretStdin === true) {
    throw new UsageError('--client-secret-file and --client-secret-stdin exclude each other');
  }
  let secret: string | undefined;
  if (options.clientSecretFile !== undefined) {
    try {
      secret = await ctx.readTextFile(options.clientSecretFile);
    } catch (error) {
      throw new UsageError(`cannot read the client secret file ${options.clientSecretFile}`, { cause: error });
    }
  } else if (options.clientSecretStdin === true) {
    secret = await ctx.readStdin();
  } else {
    secret = pickSetting(undefined, ctx.env.MMAUTH_CLIENT_SECRET, profile?.clientSecret) ?? (await ctx.prompter.secret('Client secret:', SECRET_SOURCES));
  }
  secret = secret.replace(/[\r\n]+$/, '');
  if (secret === '' || /[\r\n]/.test(secret)) {
    throw new UsageError('the client secret is empty or spans several lines', { hint: `provide it with ${SECRET_SOURCES}` });
  }
  return secret;
}

/**
 * The scope to request: flag > profile > a checkbox of the spec's known scopes (§2.5) on a TTY >
 * `fallback`. Space-separated; commas refused (UsageError).
 */
export async function chooseScope(flag: string | undefined, profile: Profile | undefined, fallback: string, ctx: AppContext): Promise<string> {
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

/** The scope to request: flag > profile > `service` (space-separated; commas refused). */
export function resolveScope(flag: string | undefined, profile: Profile | undefined, fallback: string): string {
  const scope = normalizeScope(pickSetting(flag, undefined, profile?.scope) ?? fallback);
  if (scope.includes(',')) {
    throw new UsageError(`invalid scope "${scope}": scopes are separated by spaces, not commas`, { hint: 'e.g. --scope "service userinfo.email"' });
  }
  return scope;
}

/** A token endpoint answer as a record to store, with absolute expiry (spec §2.2, §8). */
export function toStoredToken(response: TokenResponse, grant: Grant, nowMs: number, requestedScope: string): StoredToken {
  return {
    accessToken: response.accessToken,
    tokenType: response.tokenType,
    // RFC 6749 §5.1: an omitted scope means the requested scope was granted.
    scope: response.scope ?? requestedScope,
    grant,
    obtainedAt: new Date(nowMs).toISOString(),
    expiresAt: response.expiresInS === undefined ? undefined : new Date(nowMs + response.expiresInS * 1000).toISOString(),
  };
}

/** The token to act on: MMAUTH_TOKEN, else the profile's. Throws AuthError "not logged in" (exit 4). */
export function requireToken(ctx: AppContext, profileName: string, profile: Profile | undefined): { accessToken: string; stored: StoredToken | undefined } {
  const fromEnv = ctx.env.MMAUTH_TOKEN?.trim();
  if (fromEnv) {
    return { accessToken: fromEnv, stored: profile?.token?.accessToken === fromEnv ? profile.token : undefined };
  }
  if (profile?.token === undefined) {
    throw new AuthError(`not logged in: profile "${profileName}" has no stored token`, {
      hint: 'run `mmauth login` or `mmauth client-credentials` first (or set MMAUTH_TOKEN)',
    });
  }
  return { accessToken: profile.token.accessToken, stored: profile.token };
}

/** Whole seconds from `nowMs` (epoch ms) until a stored token's `expiresAt`, at least 0; undefined for no expiry. */
export function secondsLeft(token: StoredToken, nowMs: number): number | undefined {
  return token.expiresAt === undefined ? undefined : Math.max(0, Math.round((Date.parse(token.expiresAt) - nowMs) / 1000));
}

/** The JSON document login and client-credentials print (wire names, snake_case). */
export function tokenJson(token: StoredToken, profileName: string, nowMs: number): Record<string, unknown> {
  const expiresInS = secondsLeft(token, nowMs);
  return {
    access_token: token.accessToken,
    token_type: token.tokenType,
    scope: token.scope ?? null,
    expires_in: expiresInS ?? null,
    expires_at: token.expiresAt === undefined ? null : formatInstant(Date.parse(token.expiresAt)),
    grant: token.grant,
    profile: profileName,
  };
}

/**
 * Prints a newly obtained token: the JSON document (tokenJson) on stdout with `isJson`, and a
 * summary for people on stderr: `headline`, scope, lifetime (human and absolute), masked token.
 */
export function reportToken(out: Output, token: StoredToken, profileName: string, nowMs: number, isJson: boolean, headline: string): void {
  if (isJson) {
    out.json(tokenJson(token, profileName, nowMs));
  }
  out.success(headline);
  out.field('scope', token.scope ?? '(none)');
  out.field('expires', describeLifetime(secondsLeft(token, nowMs), nowMs));
  out.field('token', maskToken(token.accessToken));
}

/** What a stored token is worth now: usable with time left, usable forever, expired, or absent. */
export type TokenState = 'valid' | 'no_expiry' | 'expired' | 'none';

/** The state of a stored token at `nowMs` (spec §3: a token without expires_in never expires by time). */
export function judgeStoredToken(token: StoredToken | undefined, nowMs: number): TokenState {
  if (token === undefined) return 'none';
  if (token.expiresAt === undefined) return 'no_expiry';
  return Date.parse(token.expiresAt) > nowMs ? 'valid' : 'expired';
}

/**
 * The token `token` and `header` print: MMAUTH_TOKEN when set (`stored` undefined: its lifetime is
 * not known locally, so `minTtl` does not apply), else the profile's usable token
 * (requireUsableToken; AuthError, exit 4).
 */
export async function resolveUsableToken(options: UsableTokenOptions, ctx: AppContext): Promise<{ accessToken: string; stored: StoredToken | undefined; profileName: string }> {
  const profileName = resolveProfileName(options.profile, ctx.env);
  const fromEnv = ctx.env.MMAUTH_TOKEN?.trim();
  if (fromEnv) {
    return { accessToken: fromEnv, stored: undefined, profileName };
  }
  const { profile } = await openLocalSession(options, ctx);
  const stored = requireUsableToken(profileName, profile, ctx.nowMs(), options.minTtl);
  return { accessToken: stored.accessToken, stored, profileName };
}

/** The command that gets a new token of the same kind as `grant`, for hints. */
export function renewCommand(grant: Grant | undefined): string {
  switch (grant) {
    case 'client_credentials':
      return 'mmauth client-credentials';
    case 'personal':
      return 'mmauth login --with-token';
    case 'implicit':
      return 'mmauth login --implicit';
    default:
      return 'mmauth login';
  }
}

/**
 * The stored token if it is usable for at least `minTtlS` more seconds (a token with no expiry
 * always is). Throws AuthError (exit 4) naming the profile when there is none, it has expired,
 * or less than `minTtlS` is left.
 */
export function requireUsableToken(profileName: string, profile: Profile | undefined, nowMs: number, minTtlS = 0): StoredToken {
  const token = profile?.token;
  const state = judgeStoredToken(token, nowMs);
  if (token === undefined || state === 'none') {
    throw new AuthError(`not logged in: profile "${profileName}" has no stored token`, {
      hint: 'run `mmauth login` or `mmauth client-credentials` first',
    });
  }
  const hint = `get a new one: ${renewCommand(token.grant)}${profileName === 'default' ? '' : ` --profile ${profileName}`}`;
  if (state === 'expired') {
    throw new AuthError(`the token of profile "${profileName}" expired at ${formatInstant(Date.parse(token.expiresAt ?? ''))}`, { hint });
  }
  const leftS = secondsLeft(token, nowMs);
  if (leftS !== undefined && leftS < minTtlS) {
    throw new AuthError(`the token of profile "${profileName}" has ${leftS} s left, less than --min-ttl ${minTtlS}`, { hint });
  }
  return token;
}
