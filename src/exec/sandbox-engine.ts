import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { MmauthError } from '../errors.js';
import { enginePrograms, sandboxUnavailable } from './engine-needs.js';
import type { SandboxPolicy } from './sandbox.js';
import { innerCommand } from './sandbox-inner-command.js';
import { programPid } from './program-pid.js';

/**
 * The one adapter between mmauth's sandbox policy (sandbox.ts) and the engine that enforces it:
 * Anthropic's sandbox-runtime (bubblewrap, seccomp and a filtering proxy on Linux; Seatbelt on
 * macOS), loaded only here, only by `exec --sandbox` and doctor. mmauth never patches its files;
 * what its API cannot say is done around it here (ARCHITECTURE.md, "The sandbox").
 */

type Engine = typeof import('@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js').SandboxManager;

/** The engine once asked for (preloadEngine, startSandboxed). */
let engineLoading: Promise<Engine> | undefined;

/**
 * Starts loading the engine now (its modules take 100 to 150 ms to load here), so that exec's other
 * start-up work, and the background scan of what runs later, overlap it. Never throws; a failure
 * is startSandboxed's to report.
 */
export function preloadEngine(): void {
  engineLoading ??= loadEngine();
  engineLoading.catch(() => undefined);
}

/**
 * The engine, imported now (it is no part of any other command); `sandbox_unavailable` when it
 * cannot load: its package missing (reason `package_missing`: reinstall mmauth), else this Node
 * (reason `node`).
 */
async function loadEngine(): Promise<Engine> {
  try {
    // The engine's manager module itself, not its package's index: the index adds the engine's config
    // schemas (zod), which mmauth never uses (it hands the manager a config it builds), at about 25 ms
    // of every sandboxed start. The package has no exports map and its version is pinned.
    return (await import('@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js')).SandboxManager;
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    const isMissing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const why = error instanceof Error ? error.message : String(error);
    throw isMissing
      ? sandboxUnavailable(
          `the sandbox engine's package, @anthropic-ai/sandbox-runtime, is not installed (${why})`,
          'package_missing',
        )
      : sandboxUnavailable(`the sandbox engine does not load on Node ${process.versions.node} (${why})`, 'node');
  }
}

/** A program started in the engine's sandbox. */
export interface SandboxedChild {
  child: ChildProcess;
  /** Resolves true once the program is about to start, false when the sandbox ended before (it could not set up). */
  started: Promise<boolean>;
  /** Sends `signal` to the program (or to the sandbox while it has not started). */
  signal(signal: NodeJS.Signals): void;
  /** The run's private directory of the engine's sockets and mount sources (removed by finish()). */
  engineDir: string;
  /**
   * Once the child has exited: removes the engine's placeholders and engineDir at once, and stops the
   * engine's proxies and helpers; resolves once they are gone (a caller that sets the engine up again
   * in this process waits for it). Never rejects.
   */
  finish(): Promise<void>;
}

/** The engine set up for one run (setUpEngine): startSandboxed wraps its program in it. */
export interface EngineSetUp {
  engine: Engine;
  /** The run's private directory of the engine's sockets and mount sources (removed by finish() or releaseEngine). */
  engineDir: string;
}

/**
 * Loads the engine and sets it up (its initialize: proxies, bridges; 50 to 150 ms, most of it
 * waiting for its bridges' sockets) for `policy`: egress to its allowHosts alone. Its file system
 * rules are the ones startSandboxed hands the engine as it wraps the program, so the scan of what
 * runs later (which adds to denyWrite) may still be read meanwhile, on this thread left idle. The
 * engine makes its sockets (`srt-mux-<pid>-0.sock`, its bridges') and mount sources at fixed or
 * guessable names in os.tmpdir(), where another user who binds one first in the shared /tmp keeps
 * the sandbox from starting: so they go to a private directory of this run's, named at random
 * (os.tmpdir() points there while the engine sets up and wraps). `env`: where the engine's
 * programs are found (its PATH). Rejects with `sandbox_unavailable` (reason `engine` once the
 * engine is reset, or loadEngine's); nothing has run then.
 */
export async function setUpEngine(policy: SandboxPolicy, env: NodeJS.ProcessEnv): Promise<EngineSetUp> {
  const [engine, fs, { tmpdir }] = await Promise.all([
    (engineLoading ??= loadEngine()),
    import('node:fs'),
    import('node:os'),
  ]);
  const engineDir = fs.mkdtempSync(join(tmpdir(), 'mmauth-engine-'));
  fs.chmodSync(engineDir, 0o700);
  const setUp = { engine, engineDir };
  try {
    await withTmpdir(engineDir, () =>
      engine.initialize({
        // Named, not looked up: the engine asks `which` (a process each, about 10 ms of this thread)
        // for programs it is not given, and assertEngineCanRun has found them already.
        ...(process.platform === 'linux' ? enginePrograms(env) : {}),
        network: { allowedDomains: policy.allowHosts, deniedDomains: [], strictAllowlist: true },
        filesystem: filesystemOf(policy),
      }),
    );
  } catch (error) {
    throw await refused(setUp, error);
  }
  return setUp;
}

/** Ends an engine set up for a run that never started (setUpEngine): its helpers stopped, its directory removed. Never rejects. */
export async function releaseEngine(setUp: EngineSetUp): Promise<void> {
  await setUp.engine.reset().catch(() => undefined);
  const { rmSync } = await import('node:fs');
  rmSync(setUp.engineDir, { recursive: true, force: true });
}

/** The engine's refusal (`error`) as `sandbox_unavailable`, once the engine is ended (releaseEngine). */
async function refused(setUp: EngineSetUp, error: unknown): Promise<MmauthError> {
  await releaseEngine(setUp);
  return sandboxUnavailable(
    `the sandbox engine refused to set up (${error instanceof Error ? error.message : String(error)})`,
    'engine',
  );
}

/** `policy`'s file system rules as the engine takes them. */
const filesystemOf = (policy: SandboxPolicy) => ({
  denyRead: policy.denyRead,
  allowRead: policy.allowRead,
  allowWrite: policy.allowWrite,
  denyWrite: policy.denyWrite,
});

/** `run()` with os.tmpdir() at `dir` (TMPDIR) until it settles; TMPDIR as it was after. */
async function withTmpdir<T>(dir: string, run: () => Promise<T>): Promise<T> {
  const given = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await run();
  } finally {
    if (given === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = given;
  }
}

/**
 * Starts `command` (argv) under the engine with `policy`, in `cwd`, with `env` (the child's whole
 * environment; the engine adds its proxy variables) and the terminal as it is. `setUp`: the engine
 * as setUpEngine set it up for this policy's egress (its file system rules are `policy`'s all the
 * same); without it, the engine is set up here. The sandbox's process group is its own (Ctrl-C
 * reaches mmauth, which forwards it to the program: signal()). Throws `sandbox_unavailable` when the
 * engine cannot load or refuses the policy; nothing has run then.
 */
export async function startSandboxed(
  policy: SandboxPolicy,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  setUp?: Promise<EngineSetUp>,
): Promise<SandboxedChild> {
  const [{ spawn }, { randomBytes }, fs] = await Promise.all([
    import('node:child_process'),
    import('node:crypto'),
    import('node:fs'),
  ]);
  const { engine, engineDir } = await (setUp ?? setUpEngine(policy, env));
  const marker = randomBytes(16).toString('hex');
  const removeEngineDir = () => fs.rmSync(engineDir, { recursive: true, force: true });
  let argv: string[];
  try {
    // The run's own file system rules, whatever the engine was set up with.
    ({ argv } = await withTmpdir(engineDir, () =>
      engine.wrapWithSandboxArgv(
        innerCommand(policy, command, marker),
        undefined,
        { filesystem: filesystemOf(policy) },
        undefined,
        cwd,
      ),
    ));
  } catch (error) {
    throw await refused({ engine, engineDir }, error);
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
    engineDir,
    finish: () => {
      // As the engine's own CLI ends a run: the placeholders removed at once (its documented clean-up
      // after a command), its helpers told to stop (reset's first steps: SIGTERM to its socat
      // bridges, which end on it) and its directory removed, without waiting for them to go.
      try {
        engine.cleanupAfterCommand();
      } catch {
        // reset() below tries again.
      }
      const resetting = engine.reset().catch(() => undefined);
      removeEngineDir();
      return resetting;
    },
  };
}

/** The error for a sandbox that ended before the program started (no user namespaces, a mount refused). */
export function sandboxFailed(code: number | null): MmauthError {
  return sandboxUnavailable(
    `the sandbox could not be set up (exit ${String(code)}; its message is above): the program did not run`,
    'setup_failed',
  );
}
