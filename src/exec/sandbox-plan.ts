import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { MmauthError } from '../errors.js';
import { assertEngineCanRun } from './engine-needs.js';
import { preloadEngine, releaseEngine, setUpEngine, type EngineSetUp } from './sandbox-engine.js';
import { removeDeadRuns } from './dead-runs.js';
import { enginePlaceholders, gitExcludingPlaceholders, removeLeftPlaceholders } from './engine-placeholders.js';
import { SCAN_GLOBS, type RunsLaterScan } from './runs-later.js';
import { indexFileFor } from './scan-index.js';
import { reviewRunsLater, scanInBackground, type RunsLaterReview } from './runs-later-changes.js';
import type { WatchdogReview } from './watchdog.js';
import { createPrivateDir } from './token-file.js';
import { runtimeDirs } from './runtime-dirs.js';
import {
  heldBackVariables,
  isHostEntry,
  isOpeningHost,
  isWithin,
  keyringPaths,
  realPath,
  SANDBOX_UNSET_ENV,
  sandboxPolicy,
  type SandboxPolicy,
  type SandboxPolicyInput,
} from './sandbox.js';

/** What the caller adds to the sandbox's walls (the command line's --allow-write, --deny-read, --allow-host). */
export interface SandboxAdditions {
  allowWrite?: readonly string[] | undefined;
  denyRead?: readonly string[] | undefined;
  allowHost?: readonly string[] | undefined;
  /** Secret-looking variables let through all the same (--pass-env). */
  passEnv?: readonly string[] | undefined;
}

/** One sandboxed run as runChild starts it: its policy, and what to do should the start or mmauth fail. */
export interface SandboxRun {
  policy: SandboxPolicy;
  /** The policy made again (the writable roots scanned again, the runtime directories listed again). */
  rebuild(): Promise<SandboxPolicy>;
  /** What a watchdog needs to move aside what the child planted, should mmauth die before its review. */
  watchdogReview(): WatchdogReview | undefined;
  /**
   * Housekeeping, off the start's path (runChild calls it once the program has run a while, or as it
   * ends): removes the private directories that runs which died without their clean-up left in this
   * user's runtime roots (removeDeadRuns).
   */
  housekeep(): void;
  /** What --verbose says of the run: the policy, and how what runs later was found. */
  verboseLines(): string[];
  /**
   * The engine as runFor set it up for this policy's egress (setUpEngine, for startSandboxed), the
   * first time asked; undefined after (a sandbox set up again sets the engine up itself).
   */
  engineSetUp(): Promise<EngineSetUp> | undefined;
  /** The child has exited: the restat the review needs starts beside this process, while the engine finishes. */
  childExited(): void;
}

/** A sandbox checked and prepared before anything runs; its policy once the mode's endpoints are known. */
export interface PreparedSandbox {
  /** The policy for egress to `egressUrls` (the mode's endpoints), this run's own `ownDirs` left visible. */
  policyFor(egressUrls: readonly string[], ownDirs: readonly string[]): Promise<SandboxPolicy>;
  /**
   * policyFor's policy as a run (SandboxRun), for runChild, with the engine set up for its egress
   * (setUpEngine, started before the scan is read: SandboxRun.engineSetUp). Resolves once both
   * are done; an engine that refused is startSandboxed's to report. Never rejects otherwise.
   */
  runFor(egressUrls: readonly string[], ownDirs: readonly string[]): Promise<SandboxRun>;
  /** Removes the child's temp dir, and releases an engine runFor set up that no run took; idempotent, never throws. */
  remove(): void;
  /** Variables the child never gets: the grant's and the bus's (SANDBOX_UNSET_ENV), and the Unix sockets' (unreachable there). */
  unsetEnv: readonly string[];
  /** The parent's variables held back because their names look secret (heldBackVariables), before mmauth adds its own. */
  heldBackEnv: readonly string[];
  /**
   * After the child exited: what it left that runs later, moved aside, and the on-purpose files it
   * changed (reviewRunsLater over the scan policyFor made, with the restat childExited started);
   * undefined before policyFor. Never rejects.
   */
  review(): Promise<RunsLaterReview | undefined>;
  /** Variables added to the child's environment: git told to ignore the engine's placeholders. */
  addedEnv: Readonly<Record<string, string>>;
}

/**
 * Checks that the sandbox can run here (assertEngineCanRun) and that `additions` are well formed,
 * makes the child's private temp dir (0700), and returns how to state the policy once the mode's
 * endpoints are known: writes in `cwd`, the temp dir and --allow-write; no reads of `configDirs`,
 * the keyring's files under `home`, any mmauth runtime directory but this run's own, or --deny-read;
 * egress to the mode's endpoints and --allow-host. Throws `sandbox_unavailable`, or `usage` for an
 * --allow-host that is no `HOST[:PORT]`. The project's rules for `exec --sandbox`.
 */
export function prepareSandbox(
  additions: SandboxAdditions,
  where: { env: NodeJS.ProcessEnv; platform: NodeJS.Platform; cwd: string; configDirs: readonly string[] },
): PreparedSandbox {
  assertEngineCanRun(where.env, where.platform);
  for (const host of additions.allowHost ?? []) {
    if (!isHostEntry(host)) throw new MmauthError('usage', `"${host}" is not HOST or HOST:PORT`);
    if (isOpeningHost(host)) {
      throw new MmauthError('usage', `--allow-host ${host} would open every host or loopback to the child`, {
        hint: 'name each host the child needs (HOST or HOST:PORT); its own loopback servers need no --allow-host',
      });
    }
  }
  // Listed once for the checks and the policy (a rebuilt policy lists them again).
  let knownRuntimeDirs: string[] | undefined = runtimeDirs(where.env);
  assertWallsKept(additions, where, knownRuntimeDirs);
  // What a run killed before its clean-up left here: the engine's empty read-only placeholders.
  removeLeftPlaceholders(where.cwd);
  const tmpDir = createPrivateDir(where.env, 'mmauth-sandbox-');
  // The writable roots a child's plant could run later from: the working directory and each --allow-write.
  const roots = [
    ...new Set([where.cwd, ...(additions.allowWrite ?? [])].map((dir) => realPath(resolve(where.cwd, dir)))),
  ];
  // The scan of what runs later runs in the background (other processes) while exec gets its token
  // and loads the engine; the policy waits for it. A rebuilt policy scans again.
  // The last run's index of these roots (scan-index.ts) in the runtime root, where no sandboxed child looks.
  const indexFile = indexFileFor(dirname(tmpDir.path), roots, SCAN_GLOBS.join('\n'));
  let background = scanInBackground(roots, tmpDir.path, indexFile);
  let isScanned = false;
  preloadEngine();
  let scan: RunsLaterScan | undefined;
  // The policy's inputs but the scan's walls, known before it is read.
  const inputsFor = (egressUrls: readonly string[], ownDirs: readonly string[]): SandboxPolicyInput => ({
    placeholders: enginePlaceholders(where.cwd).map((name) => join(realPath(where.cwd), name)),
    cwd: where.cwd,
    tmpDir: tmpDir.path,
    configDirs: where.configDirs.filter((dir) => existsSync(dir)),
    home: where.env.HOME,
    runtimeDirs: knownRuntimeDirs ?? runtimeDirs(where.env),
    ownDirs: [...ownDirs],
    allowWrite: [...(additions.allowWrite ?? [])],
    denyRead: [...(additions.denyRead ?? [])],
    egressUrls: [...egressUrls],
    allowHosts: [...(additions.allowHost ?? [])],
  });
  const policyOf = async (inputs: SandboxPolicyInput): Promise<SandboxPolicy> => {
    if (isScanned) {
      background.end();
      background = scanInBackground(roots, tmpDir.path, indexFile);
    }
    isScanned = true;
    const current = await background.scan;
    scan = current;
    return sandboxPolicy({ ...inputs, walled: current.walled });
  };
  // The engine set up by runFor and not yet taken by runChild (released should none take it).
  let untaken: Promise<EngineSetUp> | undefined;
  return {
    review: async () =>
      scan === undefined ? undefined : reviewRunsLater(roots, scan, indexFile, await background.restat()),
    policyFor: (egressUrls, ownDirs) => policyOf(inputsFor(egressUrls, ownDirs)),
    runFor: async (egressUrls, ownDirs) => {
      const inputs = inputsFor(egressUrls, ownDirs);
      // The engine sets up for the run's egress while the scan is read: most of its set-up waits for
      // its bridge to listen, and reading the scan fills that wait (ARCHITECTURE.md, "The sandbox").
      // It has the run's walls when it wraps the program (startSandboxed). exec goes on only once it
      // is set up: os.tmpdir() is the engine's own meanwhile.
      const setUp = setUpEngine(sandboxPolicy(inputs), where.env);
      const settled = setUp.catch(() => undefined);
      untaken = setUp;
      const policy = await policyOf(inputs);
      await settled;
      return {
        policy,
        engineSetUp: () => {
          const taken = untaken;
          untaken = undefined;
          return taken;
        },
        rebuild: () => {
          knownRuntimeDirs = undefined;
          return policyOf(inputsFor(egressUrls, ownDirs));
        },
        verboseLines: () => [
          `sandbox policy: ${JSON.stringify(policy)}`,
          `sandbox: what runs later, from ${scan?.source ?? 'no scan'}`,
        ],
        childExited: () => void background.restat(),
        housekeep: () =>
          removeDeadRuns(runtimeDirs(where.env).filter((dir) => !basename(dir).startsWith('mmauth-agent-'))),
        watchdogReview: () =>
          scan === undefined ? undefined : { roots, present: [...scan.present], onPurpose: [...scan.onPurpose] },
      };
    },
    remove: () => {
      background.end();
      tmpDir.remove();
      void untaken?.then(releaseEngine, () => undefined);
      untaken = undefined;
    },
    unsetEnv: [...SANDBOX_UNSET_ENV, 'MMAUTH_TOKEN_SOCKET', 'MMAUTH_API_SOCKET'],
    heldBackEnv: heldBackVariables(where.env, additions.passEnv ?? []),
    addedEnv: gitExcludingPlaceholders(enginePlaceholders(where.cwd), tmpDir.path, where.env),
  };
}

/** `usage` for a writable root the sandbox never opens, naming it and the way out. */
function refusedRoot(what: string, dir: string, why: string): MmauthError {
  return new MmauthError('usage', `exec --sandbox will not let the child write ${what} ${dir}: ${why}`, {
    hint: "run it in the project's directory (cd into it), and name with --allow-write only directories below it that the child needs",
  });
}

/**
 * Decisions 65: a sandbox never opens its walls by a pattern. The working directory and each
 * --allow-write may be neither `/`, the home directory nor above it (the child could plant what the
 * shell, git and mmauth run later), and an --allow-write may not hold or lie in a config directory,
 * the keyring's files or an mmauth runtime root. A missing --allow-write directory is made (0700).
 * Throws `usage` naming the directory and the way out.
 */
function assertWallsKept(
  additions: SandboxAdditions,
  where: { env: NodeJS.ProcessEnv; cwd: string; configDirs: readonly string[] },
  runtime: readonly string[],
): void {
  const home = where.env.HOME === undefined || where.env.HOME === '' ? undefined : realPath(where.env.HOME);
  const isOverHome = (dir: string) => dir === '/' || (home !== undefined && isWithin(home, dir));
  const cwd = realPath(where.cwd);
  if (isOverHome(cwd)) {
    throw refusedRoot('in its working directory', cwd, 'it is the home directory, above it, or /');
  }
  const guarded = [...where.configDirs.map(realPath), ...(home === undefined ? [] : keyringPaths(home)), ...runtime];
  for (const given of additions.allowWrite ?? []) {
    const dir = resolve(where.cwd, given);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const real = realPath(dir);
    if (isOverHome(real)) throw refusedRoot('in --allow-write', real, 'it is the home directory, above it, or /');
    const hit = guarded.find((path) => isWithin(real, path) || isWithin(path, real));
    if (hit !== undefined) {
      throw refusedRoot('in --allow-write', real, `it opens ${hit}, which holds mmauth's credentials or runs`);
    }
  }
}
