import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MmauthError } from '../errors.js';
import type { SandboxPolicy } from './sandbox.js';

/**
 * The one adapter between mmauth's sandbox policy (sandbox.ts) and the engine that enforces it:
 * Anthropic's sandbox-runtime (bubblewrap, seccomp and a filtering proxy on Linux; Seatbelt on
 * macOS), loaded only here, only by `exec --sandbox` and doctor. mmauth never patches its files;
 * what its API cannot say is done around it here (ARCHITECTURE.md, "The sandbox").
 */

/** The programs the engine runs on Linux, from the system (never bundled or downloaded), with their Debian package. */
const LINUX_PROGRAMS: ReadonlyArray<readonly [program: string, debianPackage: string]> = [
  ['bwrap', 'bubblewrap'],
  ['socat', 'socat'],
  ['rg', 'ripgrep'],
];

function onPath(env: NodeJS.ProcessEnv, program: string): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, program)));
}

function unavailable(message: string, reason: string, extra: Record<string, string> = {}): MmauthError {
  return new MmauthError('sandbox_unavailable', `exec --sandbox cannot run the program: ${message}`, {
    details: { reason, ...extra },
  });
}

/**
 * Throws `sandbox_unavailable` (details.reason `platform`, or `missing` with details.packages) where
 * the engine cannot run: a platform other than Linux and macOS, or on Linux a program it needs
 * missing from PATH (bwrap, socat, rg), each named with its Debian package. Nothing has run then.
 */
export function assertEngineCanRun(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): void {
  if (platform === 'darwin') return;
  if (platform !== 'linux') throw unavailable(`it runs on Linux and macOS, not ${platform}`, 'platform');
  const missing = LINUX_PROGRAMS.filter(([program]) => !onPath(env, program));
  if (missing.length === 0) return;
  const names = missing.map(([program, pkg]) => `${program} (package ${pkg})`).join(', ');
  throw unavailable(`${names} not on PATH`, 'missing', { packages: missing.map(([, pkg]) => pkg).join(' ') });
}

type Engine = typeof import('@anthropic-ai/sandbox-runtime').SandboxManager;

/**
 * The engine, imported now (it is no part of any other command); `sandbox_unavailable` when it
 * cannot load: its package missing (reason `package_missing`: reinstall mmauth), else this Node
 * (reason `node`).
 */
async function loadEngine(): Promise<Engine> {
  try {
    return (await import('@anthropic-ai/sandbox-runtime')).SandboxManager;
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    const isMissing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const why = error instanceof Error ? error.message : String(error);
    throw isMissing
      ? unavailable(
          `the sandbox engine's package, @anthropic-ai/sandbox-runtime, is not installed (${why})`,
          'package_missing',
        )
      : unavailable(`the sandbox engine does not load on Node ${process.versions.node} (${why})`, 'node');
  }
}

/** `text` as one sh word. */
const quoted = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

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
 * from HTTP_PROXY, which the engine sets inside), then waits (at most 2 s) until each listens. So
 * loopback stays the child's own (its test servers answer it, no proxy in between) while mmauth's
 * endpoints keep their addresses.
 */
function bridgeCommands(policy: SandboxPolicy): string {
  const endpoints = loopbackEgress(policy);
  if (endpoints.length === 0) return '';
  const lines = ['p=${HTTP_PROXY#*://}; case $p in *@*) a=,proxyauth=${p%%@*};; *) a=;; esac'];
  for (const { host, port } of endpoints) {
    lines.push(
      `socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr PROXY:localhost:${host}:${port},proxyport=3128$a </dev/null >/dev/null 2>&1 &`,
    );
  }
  const listening = endpoints
    .map(
      ({ port }) =>
        `grep -qi ' 0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp`,
    )
    .join(' && ');
  lines.push(`i=0; until ${listening}; do i=$((i+1)); [ $i -gt 400 ] && break; sleep 0.005; done`);
  return `${lines.join('\n')}\n`;
}

/**
 * The shell line the engine runs: a byte on fd 3 (the program is about to start: mmauth tells a
 * sandbox that could not set up from a program that failed), the bridges to mmauth's loopback
 * endpoints (bridgeCommands), then the program itself, with loopback its own (NO_PROXY: its own
 * servers answer it directly), its own temp dir, and Node's fetch told to use the proxy (Node
 * 22.21+ and 24 read NODE_USE_ENV_PROXY).
 */
function innerCommand(policy: SandboxPolicy, command: readonly string[], marker: string): string {
  const env = [
    'NO_PROXY=localhost,127.0.0.1,::1',
    'no_proxy=localhost,127.0.0.1,::1',
    `TMPDIR=${policy.tmpDir}`,
    'NODE_USE_ENV_PROXY=1',
    `${RUN_MARKER}=${marker}`,
  ];
  const program = command[0]?.includes('=') === true ? `./${command[0]}` : (command[0] ?? 'true');
  // A missing program reads as it does without --sandbox: "command not found", exit 127.
  const missing = `command -v ${quoted(program)} >/dev/null 2>&1 || { printf 'error: cannot run %s: command not found\\n' ${quoted(program)} >&2; exit 127; }`;
  return `printf . >&3; exec 3>&-; ${bridgeCommands(policy)}${missing}; exec env ${[...env, program, ...command.slice(1)].map(quoted).join(' ')}`;
}

/** The variable that marks the program's own process (and its children) inside the sandbox. */
const RUN_MARKER = 'MMAUTH_SANDBOX_RUN';

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The program's own process among the descendants of `rootPid`: the first (nearest the root) whose
 * environment holds `marker` (the engine's own processes around it do not). Signals go to it, as
 * they went to the child of a plain `exec`; the engine's helpers in its session are left alone.
 */
function programPid(rootPid: number, marker: string): number | undefined {
  const needle = `${RUN_MARKER}=${marker}\0`;
  const queue = [rootPid];
  for (let seen = 0; queue.length > 0 && seen < 256; seen++) {
    const pid = queue.shift() ?? 0;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(needle)) return pid;
    } catch {
      // Gone, or not ours to read: its children may still be.
    }
    queue.push(...childrenOf(pid));
  }
  return undefined;
}

/** A program started in the engine's sandbox. */
export interface SandboxedChild {
  child: ChildProcess;
  /** Resolves true once the program is about to start, false when the sandbox ended before (it could not set up). */
  started: Promise<boolean>;
  /** Sends `signal` to the program (or to the sandbox while it has not started). */
  signal(signal: NodeJS.Signals): void;
  /** Stops the engine's proxies; call once the child has exited. Never throws. */
  finish(): Promise<void>;
}

/**
 * Starts `command` (argv) under the engine with `policy`, in `cwd`, with `env` (the child's whole
 * environment; the engine adds its proxy variables) and the terminal as it is. The sandbox's
 * process group is its own (Ctrl-C reaches mmauth, which forwards it to the program: signal()). Throws
 * `sandbox_unavailable` when the engine cannot load or refuses the policy; nothing has run then.
 */
export async function startSandboxed(
  policy: SandboxPolicy,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<SandboxedChild> {
  const [engine, { spawn }, { randomBytes }] = await Promise.all([
    loadEngine(),
    import('node:child_process'),
    import('node:crypto'),
  ]);
  const marker = randomBytes(16).toString('hex');
  let argv: string[];
  try {
    await engine.initialize({
      network: { allowedDomains: policy.allowHosts, deniedDomains: [], strictAllowlist: true },
      filesystem: {
        denyRead: policy.denyRead,
        allowRead: policy.allowRead,
        allowWrite: policy.allowWrite,
        denyWrite: policy.denyWrite,
      },
    });
    ({ argv } = await engine.wrapWithSandboxArgv(
      innerCommand(policy, command, marker),
      undefined,
      undefined,
      undefined,
      cwd,
    ));
  } catch (error) {
    await engine.reset().catch(() => undefined);
    throw unavailable(
      `the sandbox engine refused to set up (${error instanceof Error ? error.message : String(error)})`,
      'engine',
    );
  }
  const child = spawn(argv[0] ?? '/bin/sh', argv.slice(1), {
    cwd,
    env,
    detached: true,
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
  });
  const started = new Promise<boolean>((resolve) => {
    const marker = child.stdio[3] as NodeJS.ReadableStream | null;
    // The byte comes before the program runs; the pipe's end, once every process in the sandbox is gone.
    marker?.once('data', () => resolve(true));
    marker?.once('end', () => resolve(false));
    marker?.once('error', () => resolve(false));
    child.once('error', () => resolve(false));
  });
  let program: number | undefined;
  return {
    child,
    started,
    signal(signal) {
      program ??= child.pid === undefined ? undefined : programPid(child.pid, marker);
      try {
        if (program !== undefined) process.kill(program, signal);
        else if (child.pid !== undefined) process.kill(child.pid, signal);
      } catch {
        // Already gone: its exit is on its way.
      }
    },
    finish: () => engine.reset().catch(() => undefined),
  };
}

/** The error for a sandbox that ended before the program started (no user namespaces, a mount refused). */
export function sandboxFailed(code: number | null): MmauthError {
  return unavailable(
    `the sandbox could not be set up (exit ${String(code)}; its message is above): the program did not run`,
    'setup_failed',
  );
}
