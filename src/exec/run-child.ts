import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { claimSignals } from '../util/signal-claims.js';
import type { SandboxPolicy } from './sandbox.js';
import type { WatchdogExtras, WatchdogReview } from './watchdog.js';
import type { SandboxRun } from './sandbox-plan.js';
import { isMmauthError } from '../errors.js';

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
 * Runs `program` with `args` and `env`, stdin, stdout and stderr as they are (in the sandbox engine
 * with `sandbox`'s policy: startSandboxed), and forwards FORWARDED's signals to it (and SIGWINCH to a
 * sandboxed one, whose terminal is no longer its controlling one); once it has run WATCHDOG_DELAY_MS, a watchdog
 * ends it and removes `privateDir` (a path, or '' for none) should this process die without its
 * clean-up (and moves aside what a sandboxed child planted: `sandbox.watchdogReview`). Resolves with
 * its exit code, 128 + n for signal n, or, as `env` and shells do, 127 for a command that cannot be
 * found and 126 for one that cannot be run (said through `onError`). A sandbox that could not set up
 * because a directory its policy hides went away meanwhile (another run's, ended) is set up again
 * with the policy made again, at most SETUP_ATTEMPTS times in all. Throws `sandbox_unavailable`
 * when the sandbox could not be set up (nothing ran).
 */
export async function runChild(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onError: (line: string) => void,
  privateDir: string,
  sandbox?: SandboxRun,
): Promise<number> {
  let policy = sandbox?.policy;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await runOnce(program, args, env, onError, privateDir, sandbox, policy);
    } catch (error) {
      const isSetupFailure = isMmauthError(error) && error.details.reason === 'setup_failed';
      const isGone = policy !== undefined && !policy.denyRead.every((path) => existsSync(path));
      if (sandbox === undefined || !isSetupFailure || !isGone || attempt >= SETUP_ATTEMPTS) throw error;
      onError('the sandbox is set up again: a directory it hides went away while it was being set up');
      policy = await sandbox.rebuild();
    }
  }
}

/** How many times a sandbox whose hidden directories keep going away (other runs ending) is set up at most. */
const SETUP_ATTEMPTS = 3;

/** runChild's one attempt, with `policy` (sandbox's, or the one made again). */
async function runOnce(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onError: (line: string) => void,
  privateDir: string,
  run: SandboxRun | undefined,
  sandbox: SandboxPolicy | undefined,
): Promise<number> {
  const [{ spawn }, { startWatchdog }] = await Promise.all([import('node:child_process'), import('./watchdog.js')]);
  const engine = sandbox === undefined ? undefined : await import('./sandbox-engine.js');
  const sandboxed =
    sandbox === undefined || engine === undefined
      ? undefined
      : await engine.startSandboxed(sandbox, [program, ...args], env, process.cwd(), run?.engineSetUp());
  // Housekeeping once the sandboxed program has run a while, or as it ends, never while it starts:
  // its file system work would slow the sandbox's own set-up (its bridges) on a machine of two cores.
  let isStarted = false;
  let isHousekept = false;
  const housekeep = () => {
    if (!isStarted || isHousekept) return;
    isHousekept = true;
    run?.housekeep();
  };
  let housekeepingTimer: NodeJS.Timeout | undefined;
  void sandboxed?.started.then((started) => {
    isStarted = started;
    if (started) housekeepingTimer = setTimeout(housekeep, WATCHDOG_DELAY_MS);
  });
  // While the child runs, signals are its: the process's own Ctrl-C handling steps aside.
  const saved = process.listeners('SIGINT');
  process.removeAllListeners('SIGINT');
  const child = sandboxed?.child ?? spawn(program, args, { stdio: 'inherit', env });
  const forwarded = [...FORWARDED, ...(sandboxed === undefined ? [] : (['SIGWINCH'] as const))];
  const releaseSignals = claimSignals(forwarded);
  const forwarders = forwarded.map((signal) => {
    const forward = () => {
      if (sandboxed !== undefined) return sandboxed.signal(signal);
      try {
        if (child.pid !== undefined) process.kill(child.pid, signal);
      } catch {
        // Already gone: its exit is on its way.
      }
    };
    process.on(signal, forward);
    return () => process.off(signal, forward);
  });
  // Ends the child if this process is killed without its clean-up (kill -9: attacks N7). Started once
  // the child has run WATCHDOG_DELAY_MS: a short child (a test, `true`) never pays for a second Node.
  let watchdog: { release(): void } | undefined;
  const watchdogTimer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null)
      watchdog = startWatchdog(
        child.pid,
        privateDir,
        sandbox === undefined ? {} : sandboxExtras(sandbox, sandboxed?.engineDir, run?.watchdogReview()),
      );
  }, WATCHDOG_DELAY_MS);
  let isEnded = false;
  try {
    const code = await new Promise<number>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        const isMissing = error.code === 'ENOENT';
        onError(`cannot run ${program}: ${isMissing ? 'command not found' : error.message}`);
        resolve(isMissing ? 127 : 126);
      });
      child.once('exit', (code, signal) => resolve(code ?? 128 + signalNumber(signal)));
    }).then(async (code) => {
      // A sandbox that ended before the program started could not set up: nothing ran.
      if (sandboxed !== undefined && !(await sandboxed.started)) throw engine?.sandboxFailed(code);
      return code;
    });
    isEnded = true;
    return code;
  } finally {
    clearTimeout(housekeepingTimer);
    // The review's restat starts beside this process (only once the program ran: a sandbox that
    // could not set up is set up again, and its program reviewed then) while this one ends the
    // engine's run and keeps house. It may see the working directory's identity before the
    // engine's placeholders go: the review reads that directory again in any case (the
    // placeholders changed it), after they went.
    if (isStarted) run?.childExited();
    const finished = sandboxed?.finish();
    housekeep();
    // A run that ended waits for none of the engine's helpers to go (they were told to, and end with
    // this process); a sandbox that could not set up waits, since runChild may set it up again.
    if (!isEnded) await finished;
    clearTimeout(watchdogTimer);
    watchdog?.release();
    for (const remove of forwarders) remove();
    releaseSignals();
    for (const listener of saved) process.on('SIGINT', listener as () => void);
  }
}

/**
 * What a sandboxed run leaves if this process is killed: the engine's socat bridges (this process's
 * children), the child's temp dir, the placeholders the engine made in the working directory and
 * the engine's private directory of sockets (`engineDir`).
 */
function sandboxExtras(
  policy: SandboxPolicy,
  engineDir: string | undefined,
  review: WatchdogReview | undefined,
): WatchdogExtras {
  const pids: number[] = [];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const [, comm = '', rest = ''] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
        if (comm === 'socat' && Number(rest.split(' ')[1]) === process.pid) pids.push(Number(entry));
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    // No /proc (macOS): the engine's helpers there are its own to end.
  }
  return {
    pids,
    dirs: [policy.tmpDir, ...(engineDir === undefined ? [] : [engineDir])],
    placeholders: policy.placeholders ?? [],
    ...(review === undefined ? {} : { review }),
  };
}

/** How long a child runs before its watchdog starts, in ms (a kill -9 of exec before that leaves it running). */
const WATCHDOG_DELAY_MS = 200;

/** A signal's number (os.constants), for 128 + n. */
function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : (osConstants.signals[signal] ?? 0);
}
