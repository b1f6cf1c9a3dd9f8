import { randomBytes } from 'node:crypto';
import type { AccessTokenRecord, EmulatorClient } from './records.js';

/** A refresh token (RFC 6749 §1.5, §6) and the grant it renews. */
export interface RefreshTokenRecord {
  token: string;
  client: EmulatorClient;
  ownerId: number | null;
  scopes: string[];
  /** The access token issued with it: one record on the server (as servers of the family do). */
  accessToken: string;
  /** When that access token expires, epoch ms; undefined for no expiry. */
  accessExpiresAtMs: number | undefined;
  /** The refresh token it replaced, alive until `accessToken` is first used (refresh 3). */
  previous: string | undefined;
}

/**
 * The emulator's refresh tokens, with Doorkeeper's rotation (what servers of the family do, refresh tokens
 * 2–6): a refresh answers a new pair; the old refresh token stays usable until the new access
 * token is first used; refresh tokens never expire by time, only by revocation or rotation.
 */
export class RefreshTokens {
  readonly #byToken = new Map<string, RefreshTokenRecord>();
  readonly #byAccessToken = new Map<string, string>();
  /** Access token → the refresh token its pair replaced, kept until that access token is first presented. */
  readonly #previousOf = new Map<string, string>();

  /** Issues the refresh token of `access`; `previous` is the one it rotates out. */
  issue(access: AccessTokenRecord, previous?: string): RefreshTokenRecord {
    const record: RefreshTokenRecord = {
      token: randomBytes(32).toString('base64url'),
      client: access.client,
      ownerId: access.ownerId,
      scopes: access.scopes,
      accessToken: access.token,
      accessExpiresAtMs: access.expiresAtMs,
      previous,
    };
    this.#byToken.set(record.token, record);
    this.#byAccessToken.set(access.token, record.token);
    if (previous !== undefined) this.#previousOf.set(access.token, previous);
    return record;
  }

  /** The live refresh token `token` of `client`, or undefined (unknown, revoked, rotated, another client's). */
  find(token: string, client: EmulatorClient): RefreshTokenRecord | undefined {
    const record = this.#byToken.get(token);
    return record?.client === client ? record : undefined;
  }

  /** The live refresh token `token`, whoever's it is. */
  lookUp(token: string): RefreshTokenRecord | undefined {
    return this.#byToken.get(token);
  }

  /** The refresh token issued with access token `accessToken`, if any. */
  ofAccessToken(accessToken: string): RefreshTokenRecord | undefined {
    const token = this.#byAccessToken.get(accessToken);
    return token === undefined ? undefined : this.#byToken.get(token);
  }

  /**
   * The first presentation of an access token retires the record its pair replaced (refresh 3),
   * whether or not the access token has expired or been revoked since (refresh 7: Doorkeeper looks
   * the presented token up before it judges it). That record is one pair (refresh 5), so its access
   * token ends with it (Doorkeeper 5.5 `revoke_previous_refresh_token!` → `old_refresh_token&.revoke`):
   * returns that access token for the caller to revoke, or undefined when nothing was retired.
   */
  markUsed(accessToken: string): string | undefined {
    const previous = this.#previousOf.get(accessToken);
    if (previous === undefined) return undefined;
    this.#previousOf.delete(accessToken);
    const retired = this.#byToken.get(previous);
    this.#remove(previous);
    const record = this.ofAccessToken(accessToken);
    if (record !== undefined) record.previous = undefined;
    return retired?.accessToken;
  }

  /** Revokes a refresh token (and so the pair's record); undefined when there was none. */
  revoke(token: string): RefreshTokenRecord | undefined {
    const record = this.#byToken.get(token);
    if (record !== undefined) this.#remove(token);
    return record;
  }

  /** Every live refresh token and which access token's first use retires which one (a state file's part). */
  records(): { tokens: RefreshTokenRecord[]; previousOf: Array<[accessToken: string, refreshToken: string]> } {
    return { tokens: [...this.#byToken.values()], previousOf: [...this.#previousOf] };
  }

  /** Takes back what `records()` gave (a state file read at start); clients as the state has them. */
  restore(records: ReturnType<RefreshTokens['records']>): void {
    for (const record of records.tokens) {
      this.#byToken.set(record.token, record);
      this.#byAccessToken.set(record.accessToken, record.token);
    }
    for (const [accessToken, refreshToken] of records.previousOf) this.#previousOf.set(accessToken, refreshToken);
  }

  /** How many live refresh tokens there are, for tests. */
  get size(): number {
    return this.#byToken.size;
  }

  #remove(token: string): void {
    const record = this.#byToken.get(token);
    this.#byToken.delete(token);
    if (record !== undefined && this.#byAccessToken.get(record.accessToken) === token) {
      this.#byAccessToken.delete(record.accessToken);
    }
  }
}
