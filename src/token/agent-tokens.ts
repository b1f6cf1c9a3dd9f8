import type { AgentToken } from '../agent/agent-protocol.js';
import type { AgentTokens } from '../agent/agent-server.js';
import type { AppContext } from '../context.js';
import { isFresh } from '../grant/freshness.js';
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
 * The tokens `mmauth agent` serves (AgentTokens): each profile's usable token by the path every
 * command takes (usableAccessToken: the store, keyring, origin binding, freshness margin, lock and
 * renewal across processes), held in memory while the config file is unchanged and the token fresh
 * for the asked `minTtl` (a `stat` per request, no other I/O), one load at a time per profile however
 * many clients ask. After a refusal, a renewal only when token info no longer accepts the token
 * within a minute of the last such renewal (refusalGuard, as the proxy). Throws what usableAccessToken
 * and renewToken throw.
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
  const load = (profile: string, minTtl: number): Promise<Held> => {
    let pending = loading.get(profile);
    if (pending === undefined) {
      pending = (async () => {
        const before = await signature();
        const choice = await usableAccessToken({ profile, minTtl, renew: true, timeout: 30 }, ctx, onWarning);
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
      })().finally(() => loading.delete(profile));
      loading.set(profile, pending);
    }
    return pending;
  };
  return {
    async get(profile, minTtl) {
      const h = held.get(profile);
      if (
        h !== undefined &&
        h.signature === (await signature()) &&
        (h.stored === undefined || isFresh(h.stored, ctx.nowMs(), minTtl))
      ) {
        return toAgentToken(profile, h);
      }
      let entry = await load(profile, minTtl);
      // A load started for a smaller --min-ttl may not be enough for this one.
      if (entry.stored !== undefined && !isFresh(entry.stored, ctx.nowMs(), minTtl))
        entry = await load(profile, minTtl);
      return toAgentToken(profile, entry);
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
