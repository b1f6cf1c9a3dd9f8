import type { AgentToken } from '../agent/agent-protocol.js';
import type { AgentTokens } from '../agent/agent-server.js';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { isFresh, issuedLifetimeS } from '../grant/freshness.js';
import { renewToken } from '../grant/renewal.js';
import type { StoredToken } from '../store/profile.js';
import { fileSignature } from '../util/file-signature.js';
import { refusalGuard, type RefusalGuard } from './refusal-guard.js';
import { isAcceptedAtTokenInfo } from './token-check.js';
import { usableAccessToken } from './usable-token.js';

/** One served profile's last token, and the config file's version it was read from. */
interface Held {
  stored: StoredToken | undefined;
  accessToken: string;
  baseUrl: string | undefined;
  signature: string;
}

/**
 * Why a client's `minTtlS` may not make the agent renew `token` early (attack A10: a party that
 * holds no grant would decide how often the refresh token is spent), or undefined when it may: never
 * for more than the lifetime the server issues, and never before the token has lived half that
 * lifetime. So each token the server issues is renewed early at most once, whatever clients ask.
 */
export function earlyRenewalRefusal(token: StoredToken, minTtlS: number, nowMs: number): string | undefined {
  const lifetimeS = issuedLifetimeS(token);
  if (lifetimeS === undefined) return undefined;
  if (minTtlS > lifetimeS) {
    return `the server issues tokens for ${lifetimeS} s, less than min_ttl ${minTtlS}: not renewing`;
  }
  const ageS = Math.floor((nowMs - Date.parse(token.obtainedAt)) / 1000);
  if (ageS < lifetimeS / 2) {
    return `the token was issued ${ageS} s ago for ${lifetimeS} s; the agent renews a token early only once it has lived half its lifetime`;
  }
  return undefined;
}

/**
 * The tokens `mmauth agent` serves (AgentTokens): each profile's usable token by the path every
 * command takes (usableAccessToken: the store, keyring, origin binding, freshness margin, lock and
 * renewal across processes), held in memory while the config file is unchanged and the token fresh
 * for the asked `minTtl` (a `stat` per request, no other I/O), one load at a time per profile however
 * many clients ask. After a refusal, a renewal only when token info no longer accepts the token
 * within a minute of the last such renewal (refusalGuard, as the proxy). A client's min_ttl renews
 * early only as earlyRenewalRefusal allows, else `token_lifetime_too_short`. With `verify`, token
 * info is asked (usableAccessToken's --verify: renewed when it refuses). Throws what
 * usableAccessToken and renewToken throw.
 */
export function agentTokens(
  profiles: readonly string[],
  ctx: AppContext,
  onWarning: (line: string) => void,
): AgentTokens {
  const held = new Map<string, Held>();
  const loading = new Map<string, Promise<Held>>();
  const guards = new Map<string, RefusalGuard>();
  let configPath: string | undefined;
  const signature = async () => {
    configPath ??= (await ctx.openStore()).path;
    return fileSignature(configPath);
  };
  const toAgentToken = (profile: string, h: Held): AgentToken => ({
    accessToken: h.accessToken,
    tokenType: h.stored?.tokenType ?? 'bearer',
    expiresAt: h.stored?.expiresAt,
    scope: h.stored?.scope,
    profile,
    baseUrl: h.baseUrl,
    ...(h.stored === undefined ? {} : { grant: h.stored.grant }),
  });
  const load = (profile: string, minTtl: number, verify = false): Promise<Held> => {
    // A load that asks token info is shared only with loads that ask it too.
    const key = verify ? `${profile}\nverify` : profile;
    let pending = loading.get(key);
    if (pending === undefined) {
      pending = (async () => {
        const before = await signature();
        const choice = await usableAccessToken({ profile, minTtl, renew: true, timeout: 30, verify }, ctx, onWarning);
        const listed = (await ctx.openStore()).listOne(profile);
        // A renewal wrote the file: its new version is the one this token belongs to.
        const after = await signature();
        const entry = {
          stored: choice.stored,
          accessToken: choice.accessToken,
          baseUrl: listed?.baseUrl,
          signature: choice.stored === undefined ? before : after,
        };
        held.set(profile, entry);
        return entry;
      })().finally(() => loading.delete(key));
      loading.set(key, pending);
    }
    return pending;
  };
  return {
    async get(profile, minTtl, verify = false) {
      // Asked to verify: token info about the token as every command sees it (renewed when refused).
      let entry = verify ? await load(profile, 0, true) : held.get(profile);
      // The token as every command sees it (renewed only when stale by the usual margin).
      if (
        entry === undefined ||
        entry.signature !== (await signature()) ||
        (entry.stored !== undefined && !isFresh(entry.stored, ctx.nowMs(), 0))
      ) {
        entry = await load(profile, 0);
      }
      // A client's min_ttl renews early only as earlyRenewalRefusal allows; a load started for a
      // smaller min_ttl may not be enough for this one, hence a second turn.
      for (
        let turn = 0;
        turn < 2 && entry.stored !== undefined && !isFresh(entry.stored, ctx.nowMs(), minTtl);
        turn++
      ) {
        const refusal = earlyRenewalRefusal(entry.stored, minTtl, ctx.nowMs());
        if (refusal !== undefined)
          throw new MmauthError('token_lifetime_too_short', `profile "${profile}": ${refusal}`);
        entry = await load(profile, minTtl);
      }
      return { ...toAgentToken(profile, entry), ...(verify ? { verified: true } : {}) };
    },
    async refused(profile, accessToken) {
      const store = await ctx.openStore();
      const current = (await store.read(profile))?.token;
      // Another process (or client) renewed meanwhile: its token, no renewal.
      if (current === undefined || current.accessToken !== accessToken) {
        held.delete(profile);
        return this.get(profile, 0);
      }
      let guard = guards.get(profile);
      if (guard === undefined) {
        guard = refusalGuard(
          (token) => isAcceptedAtTokenInfo(store, profile, token, 30, ctx),
          () => ctx.nowMs(),
        );
        guards.set(profile, guard);
      }
      if (!(await guard.shouldRenew(accessToken))) return this.get(profile, 0);
      guard.renewed();
      const renewed = await renewToken(
        current,
        { profileName: profile, store, timeoutSeconds: 30, isAccessTokenRefused: true },
        ctx,
      );
      const entry = {
        stored: renewed,
        accessToken: renewed.accessToken,
        baseUrl: store.listOne(profile)?.baseUrl,
        signature: await signature(),
      };
      held.set(profile, entry);
      return toAgentToken(profile, entry);
    },
    async describe() {
      const store = await ctx.openStore();
      return profiles.map((name) => ({ name, baseUrl: store.listOne(name)?.baseUrl }));
    },
  };
}
