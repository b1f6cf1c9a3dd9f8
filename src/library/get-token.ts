import { fileSignature } from '../util/file-signature.js';
import { untilAborted } from '../util/when-aborted.js';
import type { AppContext } from '../context.js';
import { usableAccessToken } from '../token/usable-token.js';
import { agentTokenAfterRefusal } from '../token/agent-token.js';
import { agentSocketOf } from '../settings/settings.js';
import { refusalGuard, type RefusalGuard } from '../token/refusal-guard.js';
import { isAcceptedAtTokenInfo } from '../token/token-check.js';
import { isFresh } from '../grant/freshness.js';
import { renewToken } from '../grant/renewal.js';
import type { StoredToken } from '../store/profile.js';
import { createLibraryContext } from './library-context.js';
import { toLibraryError } from './library-errors.js';
import { MmauthError } from '../errors.js';

/** What `getToken` hands a program: an access token only, never a refresh token or a secret. */
export interface Token {
  /** The access token, for `Authorization: Bearer …` (RFC 6750 §2.1). */
  readonly accessToken: string;
  /** `Bearer`. */
  readonly tokenType: string;
  /** When it expires; null for a token that never does. */
  readonly expiresAt: Date | null;
  /** The scopes granted (RFC 6749 §3.3), as the server said. */
  readonly scope: readonly string[];
  /** The profile it belongs to. */
  readonly profile: string;
  /**
   * The profile's base URL, where this token may be sent (RFC 6749 §10.3: only to its own server);
   * null for a token given in MMAUTH_TOKEN without MMAUTH_BASE_URL.
   */
  readonly baseUrl: string | null;
}

/** Options of `getToken` and `createTokenSource`. */
export interface TokenOptions {
  /** The profile; default as the CLI selects one (MMAUTH_PROFILE, the approved .mmauth-profile, `profile use`, `default`). */
  profile?: string;
  /** Seconds the token must still be valid for (the CLI's --min-ttl); default 0: the renewal margin alone. */
  minTtl?: number;
  /**
   * Stops waiting: the call rejects at once with `interrupted` when it aborts. A renewal already
   * sent is not cut off: it goes on in this process and its answer is stored (nothing the server
   * issued is lost), within 30 s a request.
   */
  signal?: AbortSignal;
  /** Environment variables read instead of the process's (MMAUTH_CONFIG_DIR, MMAUTH_CLIENT_SECRET, …). */
  env?: NodeJS.ProcessEnv;
}

/** The public form of a stored token: immutable, without anything secret but the access token. */
export function toToken(
  stored: StoredToken | undefined,
  accessToken: string,
  profile: string,
  baseUrl: string | undefined,
): Token {
  return Object.freeze({
    accessToken,
    tokenType: 'Bearer',
    expiresAt: stored?.expiresAt === undefined ? null : new Date(stored.expiresAt),
    scope: Object.freeze((stored?.scope ?? '').split(' ').filter((scope) => scope !== '')),
    profile,
    baseUrl: baseUrl ?? null,
  });
}

/** exec's token file as it is now (a nested program follows it), '' without one. */
function tokenFileSignature(ctx: AppContext | undefined): string {
  const path = ctx?.env.MMAUTH_TOKEN_FILE;
  return path === undefined || path === '' ? '' : fileSignature(path);
}

/** One profile's token as a program holds it: the CLI's code path, with a cache that costs a `stat`. */
export class TokenProvider {
  #ctx: AppContext | undefined;
  #signature = '';
  /** exec's token file as the cached token was read from it, '' without one. */
  #tokenFileSignature = '';
  #configPath: string | undefined;
  #cached: { token: Token; stored: StoredToken | undefined } | undefined;
  #baseUrl: { key: string; value: string | undefined } | undefined;
  #inFlight: Promise<Token> | undefined;
  #guard: RefusalGuard | undefined;
  /** Set when tokens come from an agent (MMAUTH_AGENT_SOCK): the base URL it named with its last token. */
  #fromAgent: { baseUrl: string | undefined } | undefined;
  readonly #options: TokenOptions;

  constructor(options: TokenOptions) {
    this.#options = options;
  }

  /** The context of the file's current version: a new one (selection and store re-read) when another process wrote it. */
  async #context(): Promise<AppContext> {
    const signature = this.#configPath === undefined ? '' : fileSignature(this.#configPath);
    if (this.#ctx === undefined || signature !== this.#signature) {
      // A caller's signal never cuts a renewal off (get() stops the wait): what a server mints is stored.
      this.#ctx = createLibraryContext(this.#options.env ?? {}, new AbortController().signal);
      this.#configPath = (await this.#ctx.openStore()).path;
      this.#signature = fileSignature(this.#configPath);
      this.#cached = undefined;
    }
    return this.#ctx;
  }

  /**
   * A usable token (getToken's contract). A fresh token from an unchanged config file costs one
   * `stat` and no I/O else; one renewal at a time in this process, and across processes as always.
   * From an agent, every call asks it (well under a millisecond): no token it saw end is handed out.
   */
  async get(signal = this.#options.signal): Promise<Token> {
    return untilAborted(this.#get(), signal, stoppedWaiting);
  }

  async #get(): Promise<Token> {
    const minTtl = this.#options.minTtl ?? 0;
    const cached = this.#cached;
    if (
      cached !== undefined &&
      this.#fromAgent === undefined &&
      this.#configPath !== undefined &&
      fileSignature(this.#configPath) === this.#signature &&
      tokenFileSignature(this.#ctx) === this.#tokenFileSignature &&
      (cached.stored === undefined || isFresh(cached.stored, Date.now(), minTtl))
    ) {
      return cached.token;
    }
    this.#inFlight ??= this.#load(minTtl).finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #load(minTtl: number): Promise<Token> {
    try {
      const ctx = await this.#context();
      const options = {
        minTtl,
        renew: true,
        timeout: 30,
        ...(this.#options.profile === undefined ? {} : { profile: this.#options.profile }),
      };
      this.#tokenFileSignature = tokenFileSignature(ctx);
      const choice = await usableAccessToken(options, ctx, () => undefined);
      this.#fromAgent = agentSocketOf(ctx.env) !== undefined ? { baseUrl: choice.baseUrl } : undefined;
      const baseUrl =
        this.#fromAgent !== undefined
          ? choice.baseUrl
          : ((await ctx.openStore()).listOne(choice.profileName)?.baseUrl ?? ctx.env.MMAUTH_BASE_URL?.trim());
      const token = toToken(choice.stored, choice.accessToken, choice.profileName, baseUrl);
      // The file as it is after a renewal this call made: the next call compares with it.
      if (this.#configPath !== undefined) this.#signature = fileSignature(this.#configPath);
      this.#cached = { token, stored: choice.stored };
      return token;
    } catch (error) {
      throw toLibraryError(error, this.#ctx?.secrets);
    }
  }

  /**
   * Renews now whatever the token's lifetime (a 401 from the API: the project's rules), once across processes
   * (renewToken: when another process renewed meanwhile, its token), and returns the new token.
   * Within a minute of such a renewal, only when token info no longer accepts the token (refusalGuard);
   * otherwise `refused` itself comes back, and with it the 401.
   */
  async renewAfterRefusal(refused: Token): Promise<Token> {
    try {
      const ctx = await this.#context();
      // From an agent: it decides whether the refusal renews; nothing local is read.
      const agentSocket = agentSocketOf(ctx.env);
      if (agentSocket !== undefined) {
        const renewed = await agentTokenAfterRefusal(agentSocket, refused.profile, refused.accessToken, 30, ctx);
        const token = toToken(renewed, renewed.accessToken, refused.profile, refused.baseUrl ?? undefined);
        this.#cached = { token, stored: renewed };
        return token;
      }
      const store = await ctx.openStore();
      const profile = await store.read(refused.profile);
      const stored = profile?.token;
      if (stored === undefined || stored.accessToken !== refused.accessToken) {
        this.#cached = undefined;
        return await this.get();
      }
      // Soon after a refusal renewed, a 401 that token info does not confirm is not about the token: no renewal (P4).
      this.#guard ??= refusalGuard(
        (accessToken) => isAcceptedAtTokenInfo(store, refused.profile, accessToken, 30, ctx),
        () => ctx.nowMs(),
      );
      if (!(await this.#guard.shouldRenew(refused.accessToken))) return refused;
      this.#guard.renewed();
      const renewed = await renewToken(
        stored,
        { profileName: refused.profile, store, timeoutSeconds: 30, isAccessTokenRefused: true },
        ctx,
      );
      const token = toToken(renewed, renewed.accessToken, refused.profile, refused.baseUrl ?? undefined);
      this.#signature = this.#configPath === undefined ? '' : fileSignature(this.#configPath);
      this.#cached = { token, stored: renewed };
      return token;
    } catch (error) {
      throw toLibraryError(error, this.#ctx?.secrets);
    }
  }

  /** The base URL of `token`'s profile (MMAUTH_BASE_URL for one given in the environment), read once per config version. */
  async baseUrlOf(token: Token): Promise<string | undefined> {
    const ctx = await this.#context();
    if (agentSocketOf(ctx.env) !== undefined) return this.#fromAgent?.baseUrl;
    const key = `${token.profile}\n${this.#signature}`;
    if (this.#baseUrl?.key !== key) {
      const listed = (await ctx.openStore()).listOne(token.profile);
      this.#baseUrl = { key, value: listed?.baseUrl ?? ctx.env.MMAUTH_BASE_URL?.trim() };
    }
    return this.#baseUrl.value;
  }
}

/** The library's `interrupted` when a caller's signal aborts a wait (untilAborted): a renewal already sent goes on and is stored. */
const stoppedWaiting = () =>
  toLibraryError(
    new MmauthError('interrupted', 'stopped waiting for a token (the signal aborted); a renewal already sent goes on'),
  );

/** One provider per option set in this process, so that every `getToken()` call shares its cache. */
const providers = new Map<string, TokenProvider>();

/**
 * A usable access token of a profile (README "Tokens that programs hold"), by the same rules,
 * store, keyring, origin binding, freshness margin, lock and single-flight renewal as `mmauth
 * token`: a renewal here and one by the CLI at the same moment give one grant. A fresh token costs
 * a `stat` of the config file (re-read only when it changed). Never prompts, never opens a browser,
 * never prints, never returns a refresh token or a secret. Throws `LoginRequiredError` (code
 * `not_logged_in`, `unknown_profile`, `refresh_refused`, `token_expired`, `credentials_lost`) when
 * only a login helps, else an `MmauthError` with `code` and `exitCode` (network 3, …).
 */
export function getToken(options: TokenOptions = {}): Promise<Token> {
  const key = JSON.stringify([options.profile, options.minTtl, options.env]);
  let provider = providers.get(key);
  if (provider === undefined) {
    const { signal: _signal, ...shared } = options;
    provider = new TokenProvider(shared);
    providers.set(key, provider);
  }
  return provider.get(options.signal);
}
