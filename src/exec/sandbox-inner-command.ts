import { readFileSync } from 'node:fs';
import type { SandboxPolicy } from './sandbox.js';
import { shellWord } from '../util/shell-word.js';

/**
 * The shell line `exec --sandbox` hands the engine (innerCommand): what runs inside the sandbox
 * before the program, set up from there (bridges to mmauth's loopback endpoints, the process cap),
 * and the program's own environment there.
 */

/** Whether `host` is a loopback name or address (what the child's own network namespace answers itself). */
const isLoopbackHost = (host: string): boolean => host === 'localhost' || /^127\./.test(host);

/**
 * The loopback endpoints (`host:port`) of the policy's egress: mmauth's own endpoints for the child
 * (the proxy's, the token endpoint's) and a base URL on this machine. Inside the sandbox loopback is
 * the child's own, so each gets a bridge there (bridgeCommands).
 */
export function loopbackEgress(policy: SandboxPolicy): Array<{ host: string; port: number }> {
  return policy.allowHosts.flatMap((entry) => {
    const match = /^(.+):(\d+)$/.exec(entry);
    if (match === null || !isLoopbackHost(match[1] ?? '')) return [];
    return [{ host: match[1] ?? '', port: Number(match[2]) }];
  });
}

/**
 * Shell lines that start, inside the sandbox, one socat per loopback endpoint of the policy: it
 * listens on the child's own 127.0.0.1 at the endpoint's port and carries each connection to the
 * host's endpoint through the engine's filtering proxy (HTTP CONNECT, with the proxy's credentials
 * from HTTP_PROXY, which the engine sets inside), then waits until each listens. So
 * loopback stays the child's own (its test servers answer it, no proxy in between) while mmauth's
 * endpoints keep their addresses.
 */
function bridgeCommands(policy: SandboxPolicy): string {
  const endpoints = loopbackEgress(policy);
  if (endpoints.length === 0) return '';
  const lines = ['p=${HTTP_PROXY#*://}; case $p in *@*) a=,proxyauth=${p%%@*};; *) a=;; esac'];
  lines.push('bridges=');
  for (const { host, port } of endpoints) {
    lines.push(
      `socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr PROXY:localhost:${host}:${port},proxyport=3128$a </dev/null >/dev/null 2>&1 & bridges="$bridges $!"`,
    );
  }
  // Until each listens: /proc/net/tcp read whole (4 KiB a call) with a builtin of the engine's shell
  // (bash), no process per look (a process costs more than socat takes to listen). Read a line at a
  // time, bash makes a call per line and the kernel walks its socket tables again on each: a look
  // took about 7 ms, now about 1.5. While every bridge runs (one that could not listen, on a port
  // below 1024 or taken, has exited), at most 20,000 looks.
  const listening = endpoints
    .map(({ port }) => `$t == *"0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A"*`)
    .join(' && ');
  lines.push(
    `i=0; until read -r -d '' -N 1048576 t < /proc/net/tcp; [[ ${listening} ]]; do i=$((i+1)); [ $i -gt 20000 ] && break; for b in $bridges; do kill -0 $b 2>/dev/null || break 2; done; done; unset t`,
  );
  return `${lines.join('\n')}\n`;
}

/** The most processes a sandbox may have at once when the user's own limit says nothing lower. */
const MAX_SANDBOX_PROCESSES = 4_096;

/**
 * The cap on the sandbox's processes (RLIMIT_NPROC, set inside it): half the user's own soft limit
 * (/proc/self/limits), at most MAX_SANDBOX_PROCESSES. Linux counts a user's processes per user
 * namespace (5.14 and later), so a fork bomb inside stops at the cap and leaves the user's shell
 * the other half. Undefined where there is no such file (macOS). Root is exempt from the limit by
 * the kernel.
 */
export function processCap(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const soft = /^Max processes\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  if (soft === 'unlimited') return MAX_SANDBOX_PROCESSES;
  return Math.max(1, Math.min(MAX_SANDBOX_PROCESSES, Math.floor(Number(soft) / 2)));
}

/**
 * The shell line the engine runs: a byte on fd 3 (the program is about to start: mmauth tells a
 * sandbox that could not set up from a program that failed), the bridges to mmauth's loopback
 * endpoints (bridgeCommands), the process cap (processCap), then the program itself, with loopback its own (NO_PROXY: its own
 * servers answer it directly), its own temp dir, and Node's fetch told to use the proxy (Node
 * 22.21+ and 24 read NODE_USE_ENV_PROXY).
 */
export function innerCommand(policy: SandboxPolicy, command: readonly string[], marker: string): string {
  // Linux: loopback is the child's own (a network namespace), mmauth's endpoints bridged into it.
  // Elsewhere (macOS: no namespace) loopback goes through the engine's proxy, as its no_proxy would send it nowhere.
  const isOwnLoopback = process.platform === 'linux';
  const env = [
    ...(isOwnLoopback
      ? ['NO_PROXY=localhost,127.0.0.1,::1', 'no_proxy=localhost,127.0.0.1,::1']
      : ['-u', 'no_proxy', '-u', 'NO_PROXY']),
    `TMPDIR=${policy.tmpDir}`,
    'NODE_USE_ENV_PROXY=1',
    `${RUN_MARKER}=${marker}`,
  ];
  const program = command[0]?.includes('=') === true ? `./${command[0]}` : (command[0] ?? 'true');
  // A missing program reads as it does without --sandbox: "command not found", exit 127.
  const missing = `command -v ${shellWord(program)} >/dev/null 2>&1 || { printf 'error: cannot run %s: command not found\\n' ${shellWord(program)} >&2; exit 127; }`;
  const cap = processCap();
  const capped = cap === undefined ? '' : `ulimit -u ${cap} 2>/dev/null; `;
  return `printf . >&3; exec 3>&-; ${isOwnLoopback ? bridgeCommands(policy) : ''}${missing}; ${capped}exec env ${[...env, program, ...command.slice(1)].map(shellWord).join(' ')}`;
}

/** The variable that marks the program's own process (and its children) inside the sandbox. */
export const RUN_MARKER = 'MMAUTH_SANDBOX_RUN';
