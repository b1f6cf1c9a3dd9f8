import { randomBytes } from 'node:crypto';
import { isSameSecret } from '../util/constant-time.js';
import type { AccessTokenRecord, EmulatorClient, EmulatorUser } from './records.js';
import { DeviceCodes } from './device-codes.js';
import { RefreshTokens } from './refresh-tokens.js';

export type { AccessTokenRecord, EmulatorClient, EmulatorUser };

/** An authorization code (spec §2.1): 10 minutes, single use. */
export interface CodeRecord {
  code: string;
  client: EmulatorClient;
  ownerId: number;
  redirectUri: string;
  scopes: string[];
  /** PKCE challenge (RFC 7636 §4.3) when one was sent. */
  challenge: { value: string; method: 'S256' | 'plain' } | undefined;
  expiresAtMs: number;
}

/** A browser session on the emulator's pages (cookie), with its signed-in user. */
export interface BrowserSession {
  id: string;
  userId: number | undefined;
  /** Per-form CSRF tokens (Doorkeeper renders one per form). */
  csrfTokens: Set<string>;
  lastSeenMs: number;
}

/** Options of the in-memory state. */
export interface EmulatorStateOptions {
  /** Access token lifetime in seconds; 0 for tokens that never expire. */
  tokenTtlS: number;
  /** Whether the code flow also gets a refresh token (Doorkeeper's `use_refresh_token`). */
  hasRefreshTokens?: boolean;
  /** Seconds between device-code polls (RFC 8628 §3.2 `interval`; default 5). */
  deviceIntervalS?: number;
  /** Seconds a device code lives (`expires_in`; default 600). */
  deviceLifetimeS?: number;
  nowMs: () => number;
}

/** Authorization code lifetime (spec §2.1, §8): 10 minutes. */
export const CODE_TTL_MS = 600_000;
const SESSION_TTL_MS = 3_600_000;
/** A session nobody signed in to lives 10 minutes (an authorization code's time), so unauthenticated requests cannot pile up. */
const ANONYMOUS_SESSION_TTL_MS = 600_000;
/** The most browser sessions held at once; past it the oldest is dropped. */
export const MAX_SESSIONS = 10_000;
const PURGE_INTERVAL_MS = 1_000;

/** A token's whole lifetime in seconds, as `expires_in` reports it; undefined for no expiry. */
export function lifetimeS(record: AccessTokenRecord): number | undefined {
  return record.expiresAtMs === undefined ? undefined : Math.round((record.expiresAtMs - record.createdAtMs) / 1000);
}

/** A random URL-safe token with 256 bits of entropy (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The emulator's memory: clients, users, codes, tokens and browser sessions. Expired codes,
 * tokens and sessions are dropped (at most once a second, on use), so memory stays bounded.
 */
export class EmulatorState {
  readonly clients = new Map<string, EmulatorClient>();
  readonly users = new Map<number, EmulatorUser>();
  readonly tokenTtlS: number;
  readonly nowMs: () => number;
  private readonly codes = new Map<string, CodeRecord>();
  private readonly tokens = new Map<string, AccessTokenRecord>();
  private readonly sessions = new Map<string, BrowserSession>();
  private lastPurgeMs = 0;

  readonly refreshTokens = new RefreshTokens();
  readonly hasRefreshTokens: boolean;
  /** The device authorization grant's codes (RFC 8628). */
  readonly deviceCodes: DeviceCodes;

  constructor(options: EmulatorStateOptions) {
    this.tokenTtlS = options.tokenTtlS;
    this.nowMs = options.nowMs;
    this.hasRefreshTokens = options.hasRefreshTokens ?? true;
    this.deviceCodes = new DeviceCodes(options.deviceIntervalS ?? 5, options.deviceLifetimeS ?? 600, options.nowMs);
  }

  /** Counts of what is held, for tests and load checks. */
  sizes(): { codes: number; tokens: number; sessions: number } {
    return { codes: this.codes.size, tokens: this.tokens.size, sessions: this.sessions.size };
  }

  /** Finds a user by login and password (constant-time password comparison). */
  authenticateUser(login: string, password: string): EmulatorUser | undefined {
    for (const user of this.users.values()) {
      if (user.login === login && isSameSecret(user.password, password)) {
        return user;
      }
    }
    return undefined;
  }

  /** Issues an authorization code (spec §2.1). */
  issueCode(record: Omit<CodeRecord, 'code' | 'expiresAtMs'>): CodeRecord {
    this.purge();
    const code: CodeRecord = { ...record, code: randomToken(), expiresAtMs: this.nowMs() + CODE_TTL_MS };
    this.codes.set(code.code, code);
    return code;
  }

  /** A code that is unused and within its 10 minutes, or undefined. */
  findCode(code: string): CodeRecord | undefined {
    const record = this.codes.get(code);
    if (record === undefined || record.expiresAtMs <= this.nowMs()) {
      return undefined;
    }
    return record;
  }

  /** Burns a code after a successful exchange (spec §2.1: not reusable). */
  consumeCode(code: string): void {
    this.codes.delete(code);
  }

  /** Mints an access token; `ttlS` overrides the default lifetime (0: no expiry). */
  issueToken(
    record: Omit<AccessTokenRecord, 'token' | 'createdAtMs' | 'expiresAtMs'>,
    ttlS = this.tokenTtlS,
    token = randomToken(),
  ): AccessTokenRecord {
    this.purge();
    const nowMs = this.nowMs();
    const issued: AccessTokenRecord = {
      ...record,
      token,
      createdAtMs: nowMs,
      expiresAtMs: ttlS > 0 ? nowMs + ttlS * 1000 : undefined,
    };
    this.tokens.set(token, issued);
    return issued;
  }

  /** A token that is neither expired nor revoked (spec §3 rule 2), or undefined. */
  findActiveToken(token: string): AccessTokenRecord | undefined {
    const record = this.tokens.get(token);
    if (record === undefined || record.revokedAtMs !== undefined) return undefined;
    if (record.expiresAtMs !== undefined && record.expiresAtMs <= this.nowMs()) return undefined;
    return record;
  }

  /** Why a presented token is not live, in Doorkeeper's words (`InvalidTokenResponse`): revoked, expired or unknown. */
  whyNotLive(token: string): 'revoked' | 'expired' | 'unknown' {
    const record = this.tokens.get(token);
    if (record?.revokedAtMs !== undefined) return 'revoked';
    return record === undefined ? 'unknown' : 'expired';
  }

  /** Revokes a token: token info then answers 401 (its record is kept until purged). Its refresh token goes with it. */
  revokeToken(token: string): void {
    const record = this.tokens.get(token);
    if (record !== undefined) record.revokedAtMs ??= this.nowMs();
    const refresh = this.refreshTokens.ofAccessToken(token);
    if (refresh !== undefined) this.refreshTokens.revoke(refresh.token);
  }

  /**
   * A presented access token: its presentation retires the pair it replaced, live or not
   * (as servers of the family do): that refresh token and that access token both end.
   * Returns the presented token when it is live, else undefined.
   */
  useToken(token: string): AccessTokenRecord | undefined {
    const previousAccessToken = this.refreshTokens.markUsed(token);
    const previous = previousAccessToken === undefined ? undefined : this.tokens.get(previousAccessToken);
    if (previous !== undefined) previous.revokedAtMs ??= this.nowMs();
    return this.findActiveToken(token);
  }

  /** Every access token that is live now (neither expired nor revoked), for tests of what a client left behind. */
  liveTokens(): AccessTokenRecord[] {
    return [...this.tokens.keys()].flatMap((token) => this.findActiveToken(token) ?? []);
  }

  /** Any access token record still in memory, expired or not (revocation looks at expiry itself). */
  findToken(token: string): AccessTokenRecord | undefined {
    return this.tokens.get(token);
  }

  /** Every access token record held, live or kept to say why it is not (a state file's part). */
  tokenRecords(): AccessTokenRecord[] {
    return [...this.tokens.values()];
  }

  /** Takes back token records (a state file read at start). */
  restoreTokens(records: readonly AccessTokenRecord[]): void {
    for (const record of records) this.tokens.set(record.token, record);
  }

  /** The browser session with this id, or a new one. */
  session(id: string | undefined): BrowserSession {
    this.purge();
    const nowMs = this.nowMs();
    const existing = id === undefined ? undefined : this.sessions.get(id);
    if (existing !== undefined) {
      existing.lastSeenMs = nowMs;
      return existing;
    }
    const created: BrowserSession = { id: randomToken(), userId: undefined, csrfTokens: new Set(), lastSeenMs: nowMs };
    if (this.sessions.size >= MAX_SESSIONS) {
      // Maps keep insertion order: the first key is the oldest session.
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    this.sessions.set(created.id, created);
    return created;
  }

  private purge(): void {
    const nowMs = this.nowMs();
    if (nowMs - this.lastPurgeMs < PURGE_INTERVAL_MS) {
      return;
    }
    this.lastPurgeMs = nowMs;
    for (const [key, code] of this.codes) {
      if (code.expiresAtMs <= nowMs) this.codes.delete(key);
    }
    for (const [key, token] of this.tokens) {
      // Dead records are kept an hour, so that a 401 can say why (revoked, expired) as Doorkeeper does.
      const diedAtMs = Math.min(token.revokedAtMs ?? Infinity, token.expiresAtMs ?? Infinity);
      if (nowMs - diedAtMs > SESSION_TTL_MS) this.tokens.delete(key);
    }
    for (const [key, session] of this.sessions) {
      const ttlMs = session.userId === undefined ? ANONYMOUS_SESSION_TTL_MS : SESSION_TTL_MS;
      if (nowMs - session.lastSeenMs > ttlMs) this.sessions.delete(key);
    }
  }
}
