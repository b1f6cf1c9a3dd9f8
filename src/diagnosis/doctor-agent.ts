import { isMmauthError } from '../errors.js';
import { fail, ok, type Check, why } from './doctor-checks.js';

/** The fix of a failure to reach or trust the agent, or of its token check. */
function agentFix(error: unknown): string {
  const code = isMmauthError(error) ? error.code : undefined;
  if (code === 'agent_unreachable')
    return 'start the agent where the grant is (eval "$(mmauth agent)") and forward its socket here, or unset MMAUTH_AGENT_SOCK to use this machine\'s own profiles';
  if (code === 'agent_untrusted')
    return 'point MMAUTH_AGENT_SOCK at a socket of yours in a private (0700) directory (docs: agent.md)';
  if (code === 'agent_outdated')
    return 'restart the agent with this version of mmauth (mmauth agent --stop, then mmauth agent)';
  return "on the agent's machine: mmauth doctor --profile NAME (without MMAUTH_AGENT_SOCK) says what its profile lacks";
}

/**
 * The checks of the token agent MMAUTH_AGENT_SOCK names (`socketPath`), for a runner fed by it:
 * `agent` (reachable over a socket this user may trust, its pid and profiles: `GET /v1/status`)
 * and `agent token` (the profile's token, which the agent has token info check: `GET
 * /v1/token?verify=1`, renewed there when refused). `profile` undefined: the one MMAUTH_PROFILE
 * or the agent's default names. Each request is bounded by `timeoutSeconds`. Never throws.
 */
export async function checkAgent(
  socketPath: string,
  profile: string | undefined,
  timeoutSeconds: number,
): Promise<Check[]> {
  const { agentStatus, tokenFromAgent } = await import('../agent/agent-client.js');
  const timeoutMs = timeoutSeconds * 1000;
  let status: Awaited<ReturnType<typeof agentStatus>>;
  try {
    status = await agentStatus(socketPath, timeoutMs);
  } catch (error) {
    return [fail('agent', why(error), agentFix(error))];
  }
  const served = profile ?? status.defaultProfile;
  const names = status.profiles.map((p) => `"${p.name}"${p.name === status.defaultProfile ? ' (default)' : ''}`);
  const agent = ok('agent', `pid ${status.pid} at ${socketPath}, serving ${names.join(', ')}`);
  if (!status.profiles.some((p) => p.name === served)) {
    const fix = 'start the agent with --profile NAME for this profile, or choose one it serves (MMAUTH_PROFILE)';
    return [agent, fail('agent token', `the agent does not serve profile "${served}"`, fix)];
  }
  try {
    const token = await tokenFromAgent(socketPath, served, 0, timeoutMs, true);
    const until = token.expiresAt === undefined ? 'no expiry' : `expires ${token.expiresAt}`;
    const detail = `profile "${served}" at ${token.baseUrl ?? '(no base URL)'}: active (token info accepts it), ${until}`;
    return [agent, ok('agent token', detail)];
  } catch (error) {
    return [agent, fail('agent token', `profile "${served}": ${why(error)}`, agentFix(error))];
  }
}
