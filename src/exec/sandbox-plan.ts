import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MmauthError } from '../errors.js';
import { assertEngineCanRun } from './sandbox-engine.js';
import { createPrivateDir, isSafeParent, runtimeRootIn, runtimeRootsIn } from './token-file.js';
import { isHostEntry, SANDBOX_UNSET_ENV, sandboxPolicy, type SandboxPolicy } from './sandbox.js';

/** What the caller adds to the sandbox's walls (the command line's --allow-write, --deny-read, --allow-host). */
export interface SandboxAdditions {
  allowWrite?: readonly string[] | undefined;
  denyRead?: readonly string[] | undefined;
  allowHost?: readonly string[] | undefined;
}

/** A sandbox checked and prepared before anything runs; its policy once the mode's endpoints are known. */
export interface PreparedSandbox {
  /** The policy for egress to `egressUrls` (the mode's endpoints), this run's own `ownDirs` left visible. */
  policyFor(egressUrls: readonly string[], ownDirs: readonly string[]): SandboxPolicy;
  /** Removes the child's temp dir; idempotent, never throws. */
  remove(): void;
  /** Variables the child never gets: the grant's and the bus's (SANDBOX_UNSET_ENV), and the Unix sockets' (unreachable there). */
  unsetEnv: readonly string[];
}

/**
 * mmauth's runtime directories in XDG_RUNTIME_DIR and the temporary directory: this user's runtime
 * roots (runtimeRootIn: every exec's, proxy's and sandbox's private directory is made in one, so a
 * run that starts after the child is hidden too), made here when missing so that none appears
 * unhidden later; and the agents' directories (`mmauth-agent-*`, which their agents never remove).
 * Nothing listed here goes away while the child runs: a denied path that vanished before the engine
 * mounted over it would stop the sandbox from starting.
 */
function runtimeDirs(env: NodeJS.ProcessEnv): string[] {
  const parents = [
    ...new Set([env.XDG_RUNTIME_DIR, tmpdir()].filter((dir): dir is string => dir !== undefined && dir !== '')),
  ];
  for (const parent of parents) {
    try {
      if (isSafeParent(parent)) runtimeRootIn(parent);
    } catch {
      // A parent mmauth cannot write holds no runtime directory of its own either.
    }
  }
  const agents = parents.flatMap((parent) => {
    try {
      return readdirSync(parent, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && entry.name.startsWith('mmauth-agent-'))
        .map((entry) => join(parent, entry.name));
    } catch {
      return [];
    }
  });
  return [...runtimeRootsIn(parents), ...agents];
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
  }
  const tmpDir = createPrivateDir(where.env, 'mmauth-sandbox-');
  return {
    policyFor(egressUrls, ownDirs) {
      return sandboxPolicy({
        cwd: where.cwd,
        tmpDir: tmpDir.path,
        configDirs: where.configDirs.filter((dir) => existsSync(dir)),
        home: where.env.HOME,
        runtimeDirs: runtimeDirs(where.env),
        ownDirs: [...ownDirs],
        allowWrite: [...(additions.allowWrite ?? [])],
        denyRead: [...(additions.denyRead ?? [])],
        egressUrls: [...egressUrls],
        allowHosts: [...(additions.allowHost ?? [])],
      });
    },
    remove: () => tmpDir.remove(),
    unsetEnv: [...SANDBOX_UNSET_ENV, 'MMAUTH_TOKEN_SOCKET', 'MMAUTH_API_SOCKET'],
  };
}
