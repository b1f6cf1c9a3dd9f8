import { randomBytes, randomInt } from 'node:crypto';
import type { EmulatorClient } from './records.js';

/** RFC 8628 §6.1's user code alphabet: 20 consonants, no vowels (no words), no look-alikes. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

/** One device authorization (RFC 8628 §3.2) as the emulator holds it. */
export interface DeviceCodeRecord {
  deviceCode: string;
  /** `XXXX-XXXX` (8 of USER_CODE_ALPHABET: about 34.5 bits). */
  userCode: string;
  client: EmulatorClient;
  scopes: string[];
  expiresAtMs: number;
  /** Seconds a client must wait between polls; grows by 5 with each `slow_down`. */
  intervalS: number;
  lastPollMs: number | undefined;
  decision: 'pending' | 'approved' | 'denied';
  /** The user who approved it. */
  ownerId: number | undefined;
}

/** What a poll of a device code finds (RFC 8628 §3.5). */
export type DevicePollOutcome =
  | { kind: 'approved'; record: DeviceCodeRecord }
  | { kind: 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'invalid_grant' };

/** A user code as typed: upper case, without the dash or spaces. */
const normalised = (userCode: string) => userCode.toUpperCase().replace(/[\s-]/g, '');

/**
 * The emulator's device codes (RFC 8628): issued with `intervalS` and `lifetimeS`, approved or denied
 * on the verification page by user code, polled at the token endpoint by device code (a poll
 * sooner than the interval is `slow_down` and adds 5 s, §3.5), used once.
 */
export class DeviceCodes {
  readonly #byDeviceCode = new Map<string, DeviceCodeRecord>();
  readonly #byUserCode = new Map<string, DeviceCodeRecord>();

  constructor(
    readonly intervalS: number,
    readonly lifetimeS: number,
    private readonly nowMs: () => number,
  ) {}

  /** Issues a device code and a user code for `client`'s `scopes`. */
  issue(client: EmulatorClient, scopes: string[]): DeviceCodeRecord {
    this.#purge();
    let userCode: string;
    do {
      const letters = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]);
      userCode = `${letters.slice(0, 4).join('')}-${letters.slice(4).join('')}`;
    } while (this.#byUserCode.has(normalised(userCode)));
    const record: DeviceCodeRecord = {
      deviceCode: randomBytes(32).toString('base64url'),
      userCode,
      client,
      scopes,
      expiresAtMs: this.nowMs() + this.lifetimeS * 1000,
      intervalS: this.intervalS,
      lastPollMs: undefined,
      decision: 'pending',
      ownerId: undefined,
    };
    this.#byDeviceCode.set(record.deviceCode, record);
    this.#byUserCode.set(normalised(userCode), record);
    return record;
  }

  /** The pending, unexpired authorization of `userCode` (as typed), or undefined. */
  pending(userCode: string): DeviceCodeRecord | undefined {
    const record = this.#byUserCode.get(normalised(userCode));
    return record !== undefined && record.decision === 'pending' && record.expiresAtMs > this.nowMs()
      ? record
      : undefined;
  }

  /** Records the user's decision on a pending authorization. */
  decide(record: DeviceCodeRecord, decision: 'approved' | 'denied', ownerId: number): void {
    record.decision = decision;
    record.ownerId = ownerId;
  }

  /** A poll by `client` with `deviceCode` (RFC 8628 §3.4, §3.5); an approved code is used up. */
  poll(deviceCode: string, client: EmulatorClient): DevicePollOutcome {
    const record = this.#byDeviceCode.get(deviceCode);
    if (record === undefined || record.client !== client) return { kind: 'invalid_grant' };
    const nowMs = this.nowMs();
    if (record.expiresAtMs <= nowMs) return { kind: 'expired_token' };
    if (record.decision === 'denied') return { kind: 'access_denied' };
    const last = record.lastPollMs;
    record.lastPollMs = nowMs;
    if (record.decision === 'approved') {
      this.#byDeviceCode.delete(deviceCode);
      this.#byUserCode.delete(normalised(record.userCode));
      return { kind: 'approved', record };
    }
    // Sooner than the interval (a little slack for the network): slow down, 5 s more (§3.5).
    if (last !== undefined && nowMs - last < record.intervalS * 1000 - 250) {
      record.intervalS += 5;
      return { kind: 'slow_down' };
    }
    return { kind: 'authorization_pending' };
  }

  /** Drops codes expired a minute ago or more (kept a while to answer `expired_token`). */
  #purge(): void {
    const cutoff = this.nowMs() - 60_000;
    for (const [code, record] of this.#byDeviceCode) {
      if (record.expiresAtMs > cutoff) continue;
      this.#byDeviceCode.delete(code);
      this.#byUserCode.delete(normalised(record.userCode));
    }
  }
}
