import type { AppContext } from '../../context.js';
import { agentStatus, tokenFromAgent } from '../../agent/agent-client.js';
import { isMmauthError } from '../../errors.js';
import { formatInstant } from '../../ui/format.js';
import type { Output } from '../../ui/output.js';
import { checkAfterFailure } from '../../token/token-check.js';

/**
 * `status` with MMAUTH_AGENT_SOCK set: the agent's socket, pid and served profiles,
 * each with its token's expiry (asked of the agent, renewed there when stale), and no local file
 * read; with --check, the agent asks token info about each (spec §4.3; it renews a refused one, as
 * `token --verify` does) and each row says `active`, `refused` or `unreachable`. --json: the status
 * document with `selected_by: "agent"`, `config_file` this side's own (named, never read), no local
 * profiles, and an `agent` member. Exits as the selected profile's failure says (no token or a
 * refused one: 4). Throws `agent_unreachable`, `agent_untrusted`.
 */
export async function runAgentStatus(
  socket: string,
  options: { profile?: string | undefined; json?: boolean | undefined; check?: boolean | undefined; timeout: number },
  ctx: AppContext,
  out: Output,
): Promise<void> {
  const status = await agentStatus(socket, options.timeout * 1000);
  const selected = options.profile ?? (ctx.env.MMAUTH_PROFILE?.trim() || status.defaultProfile);
  // The selected profile's failure decides the exit code, as `status` on local profiles (no token: 4).
  let failure: unknown;
  const isChecked = options.check === true;
  const profiles = await Promise.all(
    status.profiles.map(async (profile) => {
      try {
        const token = await tokenFromAgent(socket, profile.name, 0, options.timeout * 1000, isChecked);
        const expiresAt = token.expiresAt === undefined ? null : formatInstant(Date.parse(token.expiresAt));
        const check = isChecked ? 'active' : null;
        return { name: profile.name, base_url: profile.baseUrl ?? null, expires_at: expiresAt, check, error: null };
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        if (profile.name === selected) failure = error;
        const check = isChecked ? checkAfterFailure(error) : null;
        return { name: profile.name, base_url: profile.baseUrl ?? null, expires_at: null, check, error: why };
      }
    }),
  );
  if (failure !== undefined) ctx.setExitCode(isMmauthError(failure) ? failure.exitCode : 1);
  if (options.json === true) {
    out.json({
      // This side's own config file (named, not read); the agent is in `agent`.
      config_file: (await ctx.openStore()).path,
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
    const checked = profile.check === 'active' ? ', active (token info accepts it)' : '';
    const state =
      profile.error ??
      (profile.expires_at === null
        ? `a token that does not expire${checked}`
        : `token until ${profile.expires_at}${checked}`);
    out.info(`${mark} ${profile.name}  ${profile.base_url ?? '(no base URL)'}  ${state}`);
  }
}
