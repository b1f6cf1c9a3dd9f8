import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MmauthError } from '../errors.js';
import { assertEngineCanRun } from './sandbox-engine.js';
import { isHostEntry, realPath, SANDBOX_UNSET_ENV, sandboxPolicy, type SandboxPolicy } from './sandbox.js';

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

/** The names mmauth gives its runtime directories: agents', execs', proxies', other sandboxes' temp dirs. */
const RUNTIME_PREFIXES = ['mmauth-agent-', 'mmauth-exec-', 'mmauth-proxy-', 'mmauth-sandbox-'];

/** mmauth's runtime directories (RUNTIME_PREFIXES) in XDG_RUNTIME_DIR and the temporary directory. */
function runtimeDirs(env: NodeJS.ProcessEnv): string[] {
  const parents = [env.XDG_RUNTIME_DIR, tmpdir()].filter((dir): dir is string => dir !== undefined && dir !== '');
  return [...new Set(parents)].flatMap((parent) => {
    try {
      return readdirSync(parent, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && RUNTIME_PREFIXES.some((prefix) => entry.name.startsWith(prefix)))
        .map((entry) => join(parent, entry.name));
    } catch {
      return [];
    }
  });
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
  const tmpDir = mkdtempSync(join(tmpdir(), 'mmauth-sandbox-'));
  return {
    policyFor(egressUrls, ownDirs) {
      const own = new Set([tmpDir, ...ownDirs].map(realPath));
      return sandboxPolicy({
        cwd: where.cwd,
        tmpDir,
        configDirs: where.configDirs.filter((dir) => existsSync(dir)),
        home: where.env.HOME,
        runtimeDirs: runtimeDirs(where.env).filter((dir) => !own.has(realPath(dir))),
        allowWrite: [...(additions.allowWrite ?? [])],
        denyRead: [...(additions.denyRead ?? [])],
        egressUrls: [...egressUrls],
        allowHosts: [...(additions.allowHost ?? [])],
      });
    },
    remove: () => rmSync(tmpDir, { recursive: true, force: true }),
    unsetEnv: [...SANDBOX_UNSET_ENV, 'MMAUTH_TOKEN_SOCKET', 'MMAUTH_API_SOCKET'],
  };
}
