import type { AgentToken } from '../agent/agent-protocol.js';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { TOKEN_ORIGINS } from '../oauth/wire.js';
import { pickSetting } from '../settings/settings.js';
import type { StoredToken } from '../store/profile.js';
import type { AccessTokenChoice } from './access-token.js';
import { deadlineAt, msLeft } from './helper-contract.js';

/** What a command asks the agent for: the profile (--profile), --min-ttl, and its time bounds. */
export interface AgentTokenOptions {
  profile?: string | undefined;
  minTtl: number;
  /** Seconds, for the request. */
  timeout: number;
  /** --deadline: seconds the whole command may take. */
  deadline?: number | undefined;
  /** --verify: the agent asks token info about the token (and renews it when refused). */
  verify?: boolean | undefined;
}

/** An agent's token in the shape of a stored one (never with a refresh token: none crosses the socket). */
export function storedOf(token: AgentToken, nowMs: number): StoredToken {
  return {
    accessToken: token.accessToken,
    tokenType: token.tokenType.toLowerCase(),
    scope: token.scope,
    grant: TOKEN_ORIGINS.find((origin) => origin === token.grant) ?? 'authorization_code',
    obtainedAt: new Date(nowMs).toISOString(),
    expiresAt: token.expiresAt,
  };
}

/** The origin of `url`, or undefined when it is no URL. */
export function originOf(url: string | undefined): string | undefined {
  try {
    return url === undefined ? undefined : new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The agents' servers found to be this side's own, per context (assertAgentServer). */
const checkedServers = new WeakMap<AppContext, Set<string>>();

/**
 * Refuses (`agent_untrusted`, details.reason `base_url`) an agent's token whose base URL is not the
 * server this side names for it: MMAUTH_BASE_URL, else a local profile of the token's profile name
 * (its listing only; no credential is read). Where this side names none, the agent's URL stands.
 */
async function assertAgentServer(token: AgentToken, ctx: AppContext): Promise<void> {
  // Once per context, profile and server: a program asking the agent on every call reads no file each time.
  const key = `${token.profile}\n${token.baseUrl ?? ''}`;
  const checked = checkedServers.get(ctx) ?? new Set<string>();
  if (checked.has(key)) return;
  let expected = ctx.env.MMAUTH_BASE_URL?.trim() || undefined;
  if (expected === undefined) {
    try {
      expected = (await ctx.openStore()).listOne(token.profile)?.baseUrl;
    } catch {
      // An unreadable local config names no server: the agent's stands, as where there is none.
    }
  }
  if (expected === undefined || originOf(expected) === originOf(token.baseUrl)) {
    checked.add(key);
    checkedServers.set(ctx, checked);
    return;
  }
  throw new MmauthError(
    'agent_untrusted',
    `the agent serves profile "${token.profile}" for ${token.baseUrl ?? 'no server'}, but this side names ${expected} for it: not using its token`,
    { details: { reason: 'base_url' } },
  );
}

/**
 * The token a command hands out when `MMAUTH_AGENT_SOCK` names an agent: asked of
 * the agent on `socketPath` (tokenFromAgent) for --profile or MMAUTH_PROFILE among the agent's
 * profiles (its default without either), valid for --min-ttl (with --verify, one the agent had token
 * info accept just now, renewed there when refused); no local file or keyring is read.
 * Returns the token, its profile and base URL. Throws `agent_unreachable`, `agent_untrusted` (an
 * untrusted socket, or another server than this side names: assertAgentServer) or the agent's own error.
 */
export async function agentAccessToken(
  socketPath: string,
  options: AgentTokenOptions,
  ctx: AppContext,
): Promise<AccessTokenChoice & { profileName: string; baseUrl: string | undefined }> {
  const profile = pickSetting(options.profile, ctx.env.MMAUTH_PROFILE, undefined);
  const timeoutMs = Math.max(1, Math.min(options.timeout * 1000, msLeft(deadlineAt(options.deadline))));
  // Loaded here: node:http is no cost of a `token` that reads the local store.
  const { tokenFromAgent } = await import('../agent/agent-client.js');
  const token = await tokenFromAgent(socketPath, profile, options.minTtl, timeoutMs, options.verify === true);
  ctx.secrets.remember(token.accessToken);
  await assertAgentServer(token, ctx);
  return {
    accessToken: token.accessToken,
    stored: storedOf(token, ctx.nowMs()),
    profileName: token.profile,
    baseUrl: token.baseUrl,
  };
}

/**
 * The token to use after the service refused `accessToken` of `profileName` (a 401), asked of the
 * agent (refusedToAgent: it renews when the refusal is about the token). Throws as agentAccessToken.
 */
export async function agentTokenAfterRefusal(
  socketPath: string,
  profileName: string,
  accessToken: string,
  timeoutSeconds: number,
  ctx: AppContext,
): Promise<StoredToken> {
  const { refusedToAgent } = await import('../agent/agent-client.js');
  const token = await refusedToAgent(socketPath, profileName, accessToken, timeoutSeconds * 1000);
  ctx.secrets.remember(token.accessToken);
  return storedOf(token, ctx.nowMs());
}
