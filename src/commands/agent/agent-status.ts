import type { AppContext } from '../../context.js';
import { agentStatus, tokenFromAgent } from '../../agent/agent-client.js';
import { formatInstant } from '../../ui/format.js';
import type { Output } from '../../ui/output.js';

/**
 * `status` with MMAUTH_AGENT_SOCK set: the agent's socket, pid and served profiles,
 * each with its token's expiry (asked of the agent, renewed there when stale), and no local file
 * read. --json: the status document with `selected_by: "agent"`, `config_file` the socket, no local
 * profiles, and an `agent` member. Throws `agent_unreachable`.
 */
export async function runAgentStatus(
  socket: string,
  options: { profile?: string | undefined; json?: boolean | undefined; timeout: number },
  ctx: AppContext,
  out: Output,
): Promise<void> {
  const status = await agentStatus(socket, options.timeout * 1000);
  const selected = options.profile ?? (ctx.env.MMAUTH_PROFILE?.trim() || status.defaultProfile);
  const profiles = await Promise.all(
    status.profiles.map(async (profile) => {
      try {
        const token = await tokenFromAgent(socket, profile.name, 0, options.timeout * 1000);
        const expiresAt = token.expiresAt === undefined ? null : formatInstant(Date.parse(token.expiresAt));
        return { name: profile.name, base_url: profile.baseUrl ?? null, expires_at: expiresAt, error: null };
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return { name: profile.name, base_url: profile.baseUrl ?? null, expires_at: null, error: why };
      }
    }),
  );
  if (options.json === true) {
    out.json({
      config_file: socket,
      selected,
      selected_by: 'agent',
      directory_file: null,
      profiles: [],
      agent: { socket, pid: status.pid, default_profile: status.defaultProfile, profiles },
    });
    return;
  }
  out.info(`Tokens come from the agent at ${socket} (pid ${status.pid}); no local profile is read.`);
  for (const profile of profiles) {
    const mark = profile.name === status.defaultProfile ? '*' : ' ';
    const state =
      profile.error ??
      (profile.expires_at === null ? 'a token that does not expire' : `token until ${profile.expires_at}`);
    out.info(`${mark} ${profile.name}  ${profile.base_url ?? '(no base URL)'}  ${state}`);
  }
}
