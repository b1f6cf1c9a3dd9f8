import { constants as osConstants } from 'node:os';
import type { Sandbox } from './sandbox.js';

/**
 * The signals forwarded to the child: every one whose default would end mmauth without its clean-up
 * (attacks N9). SIGUSR1 is neither obeyed nor forwarded: it would open a Node child's inspector, and
 * the launcher's listener keeps mmauth's closed (N1). SIGKILL and SIGSTOP cannot be caught.
 */
const FORWARDED = [
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGTERM',
  'SIGUSR2',
  'SIGALRM',
  'SIGVTALRM',
  'SIGXCPU',
  'SIGXFSZ',
] as const;

/**
 * Runs `program` with `args` and `env`, stdin, stdout and stderr as they are (in bubblewrap with
 * `sandbox`), and forwards FORWARDED's signals to it; once it has run WATCHDOG_DELAY_MS, a watchdog
 * ends it and removes `privateDir` (a path, or '' for none) should this process die without its
 * clean-up. Resolves with its exit code, 128 + n for signal n, or, as `env` and shells do, 127 for
 * a command that cannot be found and 126 for one that cannot be run (said through `onError`).
 * Throws `sandbox_unavailable` when bwrap exits before the command started.
 */
export async function runChild(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onError: (line: string) => void,
  privateDir: string,
  sandbox?: Sandbox,
): Promise<number> {
  const [{ spawn }, { startWatchdog }] = await Promise.all([import('node:child_process'), import('./watchdog.js')]);
  const sandboxRun = sandbox === undefined ? undefined : await import('./sandbox-run.js');
  // While the child runs, signals are its: the process's own Ctrl-C handling steps aside.
  const saved = process.listeners('SIGINT');
  process.removeAllListeners('SIGINT');
  const forwarders = FORWARDED.map((signal) => {
    const forward = () => {
      const pid = sandboxed?.signalTarget() ?? child.pid;
      try {
        if (pid !== undefined) process.kill(pid, signal);
      } catch {
        // Already gone: its exit is on its way.
      }
    };
    process.on(signal, forward);
    return () => process.off(signal, forward);
  });
  const sandboxed =
    sandbox === undefined || sandboxRun === undefined
      ? undefined
      : sandboxRun.spawnSandboxed(sandbox.bwrap, sandbox.plan, [program, ...args], env);
  const child = sandboxed?.child ?? spawn(program, args, { stdio: 'inherit', env });
  // Ends the child if this process is killed without its clean-up (kill -9: attacks N7). Started once
  // the child has run WATCHDOG_DELAY_MS: a short child (a test, `true`) never pays for a second Node.
  let watchdog: { release(): void } | undefined;
  const watchdogTimer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null) watchdog = startWatchdog(child.pid, privateDir);
  }, WATCHDOG_DELAY_MS);
  try {
    return await new Promise<number>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        const isMissing = error.code === 'ENOENT';
        onError(`cannot run ${program}: ${isMissing ? 'command not found' : error.message}`);
        resolve(isMissing ? 127 : 126);
      });
      child.once('exit', (code, signal) => resolve(code ?? 128 + signalNumber(signal)));
    }).then(async (code) => {
      // bwrap that exits before the command started could not set the sandbox up: nothing ran.
      if (sandboxed !== undefined && !(await sandboxed.started)) {
        throw sandboxRun?.sandboxFailed(code);
      }
      return code;
    });
  } finally {
    clearTimeout(watchdogTimer);
    watchdog?.release();
    for (const remove of forwarders) remove();
    for (const listener of saved) process.on('SIGINT', listener as () => void);
  }
}

/** How long a child runs before its watchdog starts, in ms (a kill -9 of exec before that leaves it running). */
const WATCHDOG_DELAY_MS = 200;

/** A signal's number (os.constants), for 128 + n. */
function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : (osConstants.signals[signal] ?? 0);
}
