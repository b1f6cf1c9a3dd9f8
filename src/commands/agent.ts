import { basename, dirname } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { versioned } from '../ui/json-document.js';
import type { Output } from '../ui/output.js';
import { withoutAgent } from './local-only-notice.js';
import { whenAborted } from '../util/when-aborted.js';
import { shellWord } from '../util/shell-word.js';

/** Options of `mmauth agent`. */
export interface AgentOptions {
  /** The profiles to serve (repeatable); default: the one selected where the agent starts. */
  profile?: string[];
  /** The socket's path; default: defaultAgentSocket. */
  socket?: string;
  foreground?: boolean;
  stop?: boolean;
  json?: boolean;
  verbose?: boolean;
}

/** `--profile` given more than once: each one served. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Registers `mmauth agent`; the logic is runAgent. */
export function registerAgent(program: Command, ctx: AppContext): void {
  program
    .command('agent')
    .description(
      'a token agent for containers, remote hosts and sandboxes: serves access tokens (never a refresh token or secret) on a Unix socket',
    )
    .option('--profile <name>', 'a profile to serve (repeatable; default: the selected profile)', collect)
    .option('--socket <path>', 'where to listen, in a private 0700 directory of yours (default: one made for it)')
    .option('--foreground', 'stay attached (systemd, tests); Ctrl-C stops')
    .option(
      '--stop',
      'stop the agent MMAUTH_AGENT_SOCK (or --socket) names; prints shell code: eval "$(mmauth agent --stop)"',
    )
    .option('--json', 'print one JSON line ({"socket", "pid"}) instead of shell commands')
    .option('--verbose', 'one line per client request on stderr (profile, outcome, renewal; never a token)')
    .addHelpText(
      'after',
      `
The agent holds the grant; programs anywhere its socket reaches ask it for the current access token
(never a refresh token or a secret). With MMAUTH_AGENT_SOCK set, token, header, api, proxy, exec,
status and the library take tokens from the agent only. More: docs/agent.md.

Examples:
  $ eval "$(mmauth agent --profile work)"          # MMAUTH_AGENT_SOCK=…; export MMAUTH_AGENT_SOCK;
  $ docker run -v "$MMAUTH_AGENT_SOCK:/run/mmauth.sock" -e MMAUTH_AGENT_SOCK=/run/mmauth.sock IMAGE mmauth token
  $ ssh -o ExitOnForwardFailure=yes -R /home/me/.mmauth/agent.sock:"$MMAUTH_AGENT_SOCK" host
                                          # into a private 0700 directory there; MMAUTH_AGENT_SOCK=~/.mmauth/agent.sock
  $ curl --unix-socket "$MMAUTH_AGENT_SOCK" 'http://agent/v1/token?profile=work'
  $ eval "$(mmauth agent --stop)"                  # stops it and unsets the variables`,
    )
    .action(async (options) => runAgent(options, ctx));
}

/** The sh lines ssh-agent prints: the socket and pid in variables, exported. */
function shellLines(socket: string, pid: number): string {
  const quoted = shellWord(socket);
  return [
    `MMAUTH_AGENT_SOCK=${quoted}; export MMAUTH_AGENT_SOCK;`,
    `MMAUTH_AGENT_PID=${pid}; export MMAUTH_AGENT_PID;`,
    `echo Agent pid ${pid};`,
  ].join('\n');
}

function announce(out: Output, options: AgentOptions, socket: string, pid: number): void {
  if (options.json === true) out.data(JSON.stringify(versioned({ socket, pid })));
  else out.data(shellLines(socket, pid));
}

/**
 * `mmauth agent`: `--stop` ends the agent MMAUTH_AGENT_SOCK (or --socket) names; otherwise finds
 * the agent already on the socket or starts one (in the background, or attached with --foreground)
 * serving the profiles named (each must exist), and prints its socket and pid as sh commands
 * (--json: one line). The agent process ignores MMAUTH_AGENT_SOCK itself; it stops on SIGTERM,
 * SIGHUP, Ctrl-C or `POST /v1/stop` (what --stop sends). Throws `unknown_profile`, `store_insecure`
 * for a socket directory that is not private, `profile_not_served` when an agent already on the
 * socket serves other profiles, `agent_unreachable` or `agent_untrusted` for --stop.
 */
export async function runAgent(options: AgentOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  if (options.stop === true) {
    const socket = options.socket ?? ctx.env.MMAUTH_AGENT_SOCK?.trim();
    if (socket === undefined || socket === '') {
      throw new MmauthError('usage', 'no agent to stop: MMAUTH_AGENT_SOCK is not set', { hint: 'pass --socket PATH' });
    }
    // Over the protocol (POST /v1/stop): no signal ever goes to a pid that came over a socket.
    const { stopAgent } = await import('../agent/agent-client.js');
    const { pid, isStopped } = await stopAgent(socket, 5_000);
    if (!isStopped) out.warn(`the agent on ${socket} said it would stop, but still answers after 5 s`);
    if (options.json === true) out.data(JSON.stringify(versioned({ socket, pid, stopped: isStopped })));
    else out.data(['unset MMAUTH_AGENT_SOCK;', 'unset MMAUTH_AGENT_PID;', `echo Agent pid ${pid} stopped;`].join('\n'));
    return;
  }
  // The agent itself reads the local store, never another agent.
  const local = withoutAgent(ctx);
  const env = local.env;
  const store = await local.openStore();
  const { selectProfile } = await import('../settings/profile-selection.js');
  const profiles = options.profile ?? [(await selectProfile(undefined, local, store)).name];
  for (const name of profiles) {
    if (store.listOne(name) === undefined) {
      throw new MmauthError('unknown_profile', `there is no profile "${name}" to serve`, {
        hint: 'create it with mmauth login --profile NAME first',
      });
    }
  }
  const { defaultAgentSocket, preparePrivateDirectory } = await import('../exec/agent-socket-path.js');
  const socket = options.socket ?? defaultAgentSocket(env, dirname(store.path));
  preparePrivateDirectory(socket);
  const { agentStatus } = await import('../agent/agent-client.js');
  // A second start with the same socket finds the running agent.
  const running = await agentStatus(socket, 2_000).catch(() => undefined);
  if (running !== undefined) {
    const missing = profiles.filter((name) => !running.profiles.some((p) => p.name === name));
    if (missing.length > 0) {
      const serves = running.profiles.map((p) => `"${p.name}"`).join(', ');
      throw new MmauthError(
        'profile_not_served',
        `an agent already runs on ${socket} (pid ${running.pid}) serving ${serves}, not ${missing.map((n) => `"${n}"`).join(', ')}`,
        {
          hint: `stop it first (eval "$(MMAUTH_AGENT_SOCK=${socket} mmauth agent --stop)"), then start one with every --profile it should serve; or start another with --socket PATH`,
        },
      );
    }
    announce(out, options, socket, running.pid);
    return;
  }
  if (options.foreground !== true) {
    const { startAgentInBackground } = await import('../exec/agent-background.js');
    const args = [...profiles.flatMap((name) => ['--profile', name]), '--socket', socket];
    const started = await startAgentInBackground(args, env);
    announce(out, options, started.socket, started.pid);
    return;
  }
  await serveAgent(socket, profiles, options, local, out);
}

/** Serves until Ctrl-C, SIGTERM or `--stop` (--foreground), then removes the socket and the directory made for it. */
async function serveAgent(
  socket: string,
  profiles: string[],
  options: AgentOptions,
  ctx: AppContext,
  out: Output,
): Promise<void> {
  const [{ rmSync, rmdirSync }, { startAgentServer }, { agentTokens }, { describeFailure }] = await Promise.all([
    import('node:fs'),
    import('../agent/agent-server.js'),
    import('../token/agent-tokens.js'),
    import('../failure/failure-report.js'),
  ]);
  // A socket file left by an agent that was killed (nothing answered on it above).
  rmSync(socket, { force: true });
  const stop = new AbortController();
  const server = await startAgentServer({
    socketPath: socket,
    profiles,
    defaultProfile: profiles[0] ?? 'default',
    tokens: agentTokens(profiles, ctx, (line) => out.warn(line)),
    errorDocument(error) {
      const failure = describeFailure(error, {
        command: 'agent',
        profileName: profiles[0] ?? 'default',
        origin: undefined,
      });
      const isRefusal = failure.code === 'forbidden_origin' || failure.exitCode === 4;
      const status = isRefusal ? 403 : failure.exitCode === 2 ? 400 : failure.exitCode === 3 ? 503 : 500;
      const document = versioned({
        error: {
          code: failure.code,
          message: failure.message,
          hint: failure.hint ?? null,
          exit_code: failure.exitCode,
          ...(failure.oauthError === undefined ? {} : { oauth_error: failure.oauthError }),
        },
      }) as Record<string, unknown>;
      return { status, document };
    },
    onStop: () => stop.abort(),
    onRequest:
      options.verbose === true
        ? (log) =>
            out.debug(`${log.method} ${log.path}${log.profile === undefined ? '' : ` ${log.profile}`}: ${log.outcome}`)
        : undefined,
  });
  announce(out, options, socket, process.pid);
  await whenAborted(AbortSignal.any([ctx.signal, stop.signal]), ['SIGTERM', 'SIGHUP']);
  await server.close();
  rmSync(socket, { force: true });
  // The directory made for it (mmauth-agent-…, as a background start names it too) goes, once empty.
  if (basename(dirname(socket)).startsWith('mmauth-agent-')) {
    try {
      rmdirSync(dirname(socket));
    } catch {
      // Another agent's socket is in it (one per config directory), or it is gone already.
    }
  }
}
