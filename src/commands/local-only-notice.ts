import type { AppContext } from '../context.js';
import { agentSocketOf } from '../settings/settings.js';

/** The commands that act on this machine's own profiles even when an agent is named. */
const LOCAL_ONLY = new Set(['login', 'logout', 'revoke', 'profile', 'client-credentials', 'refresh', 'info']);

/**
 * Says once on stderr, before `command` runs, that it acts on this machine's own profiles while
 * MMAUTH_AGENT_SOCK names an agent (whose grants stay where the agent runs).
 */
export async function noteLocalOnly(command: string, ctx: AppContext): Promise<void> {
  if (!LOCAL_ONLY.has(command) || agentSocketOf(ctx.env) === undefined) return;
  (await ctx.output()).warn(
    `MMAUTH_AGENT_SOCK is set: ${command} acts on this machine's own profiles, not on the agent's (run it where the agent runs)`,
  );
}

/**
 * `ctx` with MMAUTH_AGENT_SOCK taken out of its environment: what a command that acts on this
 * machine's own profiles (the agent itself, `info`) reads tokens through. Everything else is `ctx`'s.
 */
export function withoutAgent(ctx: AppContext): AppContext {
  if (agentSocketOf(ctx.env) === undefined) return ctx;
  return Object.create(ctx, { env: { value: { ...ctx.env, MMAUTH_AGENT_SOCK: '' }, enumerable: true } }) as AppContext;
}
