import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';
import { defaultConfigDir } from '../../store/profile-store.js';
import { busSocketPaths, findBwrap, SANDBOX_UNSET_ENV, type Sandbox } from '../../exec/sandbox.js';

/**
 * What `exec --sandbox` needs, worked out before anything runs: bwrap on PATH
 * (Linux only), the config directories to hide (the one in use and the default one, where they
 * exist), the session bus's sockets to cover. Throws `sandbox_unavailable` without bwrap, off
 * Linux, or for a bus on an abstract socket (busSocketPaths).
 */
export async function sandboxFor(ctx: AppContext): Promise<Sandbox> {
  const bwrap = ctx.platform === 'linux' ? findBwrap(ctx.env) : undefined;
  if (bwrap === undefined) {
    const where =
      ctx.platform === 'linux' ? 'bubblewrap (bwrap) is not on PATH' : `it runs on Linux only, not ${ctx.platform}`;
    throw new MmauthError('sandbox_unavailable', `exec --sandbox cannot run the program: ${where}`, {
      details: { reason: 'no_bwrap' },
    });
  }
  const busPaths = busSocketPaths(ctx.env);
  const inUse = dirname((await ctx.openStore()).path);
  const hiddenDirs = [...new Set([inUse, defaultConfigDir()])].filter((dir) => existsSync(dir));
  return { bwrap, plan: { hiddenDirs, keptPaths: [], busPaths, unsetEnv: SANDBOX_UNSET_ENV } };
}
