import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MmauthError } from '../errors.js';
import { bwrapArgs, type SandboxPlan } from './sandbox.js';

/** A command started under bubblewrap: bwrap's process, and the command's own pid once known (for signals). */
export interface SandboxedChild {
  child: ChildProcess;
  /** The command's pid (in this PID namespace), or bwrap's until the command has started. */
  signalTarget(): number | undefined;
  /** Resolves true once the command started, false when bwrap exited before (it could not set up). */
  started: Promise<boolean>;
}

/** The first child of `pid` (bwrap's init in the new PID namespace forks the command), if any yet. */
function firstChildOf(pid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
    const first = Number(children[0]);
    return Number.isInteger(first) && first > 0 ? first : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts `command` under `bwrap` (bwrapArgs: `plan`'s hidden directories and bus, a PID namespace of
 * its own) with the terminal and `env` as given. bwrap's JSON status on fd 3 names its init's pid;
 * signals go to the command under it (bwrap forwards none), so exit codes and 128 + n stay `exec`'s.
 */
export function spawnSandboxed(
  bwrap: string,
  plan: SandboxPlan,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
): SandboxedChild {
  const child = spawn(bwrap, bwrapArgs(plan, command, 3), { stdio: ['inherit', 'inherit', 'inherit', 'pipe'], env });
  let initPid: number | undefined;
  let commandPid: number | undefined;
  let status = '';
  const started = new Promise<boolean>((resolve) => {
    const status3 = child.stdio[3] as NodeJS.ReadableStream | null;
    status3?.on('data', (chunk: Buffer) => {
      status += chunk.toString();
      const pid = /"child-pid":\s*(\d+)/.exec(status)?.[1];
      if (pid !== undefined && initPid === undefined) {
        initPid = Number(pid);
        resolve(true);
      }
    });
    child.once('exit', () => resolve(initPid !== undefined));
    child.once('error', () => resolve(false));
  });
  return {
    child,
    started,
    signalTarget() {
      if (commandPid === undefined && initPid !== undefined) commandPid = firstChildOf(initPid);
      return commandPid ?? child.pid;
    },
  };
}

/** The error for a bwrap that could not set the sandbox up (no user namespaces, a mount refused): nothing ran. */
export function sandboxFailed(code: number | null): MmauthError {
  return new MmauthError(
    'sandbox_unavailable',
    `bubblewrap could not set up the sandbox (exit ${String(code)}; its message is above): the program did not run`,
    { details: { reason: 'bwrap_failed' } },
  );
}
