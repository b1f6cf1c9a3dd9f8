import type { AgentToken } from '../agent/agent-protocol.js';
import type { AppContext } from '../context.js';
import type { FollowedState, ProfileFollower } from './profile-follower.js';
import { originOf, storedOf } from './agent-token.js';

/**
 * How often an agent-fed `exec` asks the agent for its current token, in ms: the longest a child's
 * file or `--serve` endpoint holds a token the agent has replaced is this plus one answer.
 * An answer costs the agent a `stat` of its config file and no other I/O.
 */
export const AGENT_FOLLOW_POLL_MS = 250;
/** The bound on one of those questions, in ms. */
const ASK_TIMEOUT_MS = 5_000;

/**
 * Follows profile `profileName` as the agent on `socketPath` serves it, for an agent-fed `exec` or
 * `proxy` (the agent renews, after any client's 401 or when the token goes stale; its clients
 * hold no grant): every AGENT_FOLLOW_POLL_MS it asks `GET /v1/token?min_ttl=0` (which renews
 * nothing early) and calls the `onChange` listener when the agent hands out another token than
 * the last one seen. read() gives the last token asked (asking now when none was), `rebound` when
 * the agent serves the profile for another origin than `baseUrl` (the one the run began with).
 * A question that fails is asked again at the next turn: the keeper's own renewal says why.
 * The timer is unref'd. Never throws from the poll; read() throws what tokenFromAgent throws.
 */
export function followAgent(
  socketPath: string,
  profileName: string,
  first: { accessToken: string; baseUrl: string | undefined },
  ctx: AppContext,
): ProfileFollower {
  let onChange = () => undefined as void;
  let seen = first.accessToken;
  let latest: AgentToken | undefined;
  let isChanged = false;
  let asking: Promise<AgentToken | undefined> | undefined;
  const ask = () =>
    (asking ??= (async () => {
      const { tokenFromAgent } = await import('../agent/agent-client.js');
      const token = await tokenFromAgent(socketPath, profileName, 0, ASK_TIMEOUT_MS).catch(() => undefined);
      if (token !== undefined) {
        ctx.secrets.remember(token.accessToken);
        latest = token;
      }
      return token;
    })().finally(() => {
      asking = undefined;
    }));
  const poll = setInterval(() => {
    if (asking !== undefined) return;
    void ask().then((token) => {
      if (token === undefined || token.accessToken === seen) return;
      seen = token.accessToken;
      isChanged = true;
      onChange();
    });
  }, AGENT_FOLLOW_POLL_MS);
  poll.unref();
  return {
    hasChanged() {
      const was = isChanged;
      isChanged = false;
      return was;
    },
    onChange(listener) {
      onChange = listener;
    },
    async read(): Promise<FollowedState> {
      const token = latest ?? (await ask());
      if (token === undefined) throw new Error(`the agent at ${socketPath} did not answer`);
      if (originOf(token.baseUrl) !== originOf(first.baseUrl)) return { kind: 'rebound' };
      return { kind: 'token', token: storedOf(token, ctx.nowMs()) };
    },
    close() {
      clearInterval(poll);
    },
  };
}
