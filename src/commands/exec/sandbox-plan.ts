import { dirname } from 'node:path';
import type { AppContext } from '../../context.js';
import { prepareSandbox, type PreparedSandbox, type SandboxAdditions } from '../../exec/sandbox-plan.js';
import { defaultConfigDir } from '../../store/profile-store.js';

/**
 * What `exec --sandbox` needs, worked out before anything runs (prepareSandbox): the engine's
 * programs, the config directories to hide (the one in use and the default one), the flags'
 * additions. Throws `sandbox_unavailable` where the sandbox cannot run, `usage` for a bad
 * --allow-host.
 */
export async function sandboxFor(additions: SandboxAdditions, ctx: AppContext): Promise<PreparedSandbox> {
  const inUse = dirname((await ctx.openStore()).path);
  return prepareSandbox(additions, {
    env: ctx.env,
    platform: ctx.platform,
    cwd: process.cwd(),
    configDirs: [inUse, defaultConfigDir()],
  });
}
