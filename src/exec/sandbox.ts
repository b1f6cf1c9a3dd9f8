import { existsSync, lstatSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MmauthError } from '../errors.js';

/** What the sandbox hides and what it lets through (exec --sandbox; the project's rules). */
export interface SandboxPlan {
  /** Directories replaced by an empty one: the config directories, exec's private directory. */
  hiddenDirs: string[];
  /** Files and sockets bound back inside a hidden directory: the token file, the token or proxy socket. */
  keptPaths: string[];
  /** A session bus socket on a path, covered by /dev/null: the keyring cannot be asked. */
  busPaths: string[];
  /** Variables the child never gets. */
  unsetEnv: string[];
}

/** bubblewrap and what it hides, for `exec --sandbox`. */
export interface Sandbox {
  bwrap: string;
  plan: SandboxPlan;
}

/** The variables `--sandbox` takes out of the child's environment. */
export const SANDBOX_UNSET_ENV = [
  'MMAUTH_CONFIG_DIR',
  'MMAUTH_CLIENT_SECRET',
  'DBUS_SESSION_BUS_ADDRESS',
  'MMAUTH_AGENT_SOCK',
];

/** bubblewrap on PATH (the project's rules: the system's, never bundled or downloaded), or undefined. */
export function findBwrap(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'bwrap');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The session bus's socket paths named by `address` (D-Bus's `unix:path=…`; several addresses are
 * `;`-separated), plus `$XDG_RUNTIME_DIR/bus` (where a child would look without the variable).
 * Throws `sandbox_unavailable` for an abstract socket (`unix:abstract=`, `unix:tmpdir=`): no path
 * hides one, and the child must never run with the bus reachable.
 */
export function busSocketPaths(env: NodeJS.ProcessEnv): string[] {
  const paths = new Set<string>();
  for (const address of (env.DBUS_SESSION_BUS_ADDRESS ?? '').split(';')) {
    if (address.trim() === '') continue;
    if (/^unix:.*\b(abstract|tmpdir)=/.test(address)) {
      throw new MmauthError(
        'sandbox_unavailable',
        `the session bus listens on an abstract socket (${address.split(',')[0] ?? address}), which no file path can hide: the sandboxed program could ask the keyring for your credentials`,
        { details: { reason: 'abstract_bus' } },
      );
    }
    const path = /^unix:(?:.*,)?path=([^,]+)/.exec(address)?.[1];
    if (path !== undefined) paths.add(decodeURIComponent(path));
  }
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && runtime !== '') paths.add(join(runtime, 'bus'));
  return [...paths].filter((path) => {
    try {
      return lstatSync(path).isSocket();
    } catch {
      return false;
    }
  });
}

/**
 * bwrap's arguments for `plan` around `command` (bubblewrap 0.8): the whole file system as it is
 * (`--dev-bind / /`: the user's files, devices, the terminal), the network as it is, a PID namespace
 * of its own with a fresh /proc (mmauth and its parent are not there: no /proc/PID/environ, no
 * ptrace), each hidden directory an empty tmpfs with what is kept bound back, each bus socket
 * covered by /dev/null, the variables unset. `statusFd` gets bwrap's JSON status (the child's pid).
 */
export function bwrapArgs(plan: SandboxPlan, command: readonly string[], statusFd: number): string[] {
  const args = ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--die-with-parent'];
  args.push('--json-status-fd', String(statusFd));
  for (const dir of plan.hiddenDirs) args.push('--tmpfs', dir);
  for (const path of plan.keptPaths) args.push('--bind', path, path);
  for (const path of plan.busPaths) args.push('--ro-bind', '/dev/null', path);
  for (const name of plan.unsetEnv) args.push('--unsetenv', name);
  return [...args, '--', ...command];
}
