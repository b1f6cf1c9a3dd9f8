import { dirname } from 'node:path';
import type { AppContext } from '../context.js';
import { isMmauthError } from '../errors.js';
import { defaultConfigDir } from '../store/profile-store.js';
import { ok, skip, warn, type Check } from './doctor-checks.js';

/** The config directories exec --sandbox hides: the one in use (when the store opens) and the default one. */
async function configDirs(ctx: AppContext): Promise<string[]> {
  const inUse = await ctx.openStore().then(
    (store) => [dirname(store.path)],
    () => [],
  );
  return [...inUse, defaultConfigDir()];
}

/**
 * Whether `exec --sandbox` works here, by the same check exec makes (prepareSandbox: the platform,
 * the engine's programs) and a run of `true` under the same policy, with the same paths hidden (so
 * a path the sandbox cannot map fails here as it would there). Never throws.
 */
export async function checkSandbox(ctx: AppContext): Promise<Check> {
  if (ctx.platform !== 'linux' && ctx.platform !== 'darwin') {
    return skip('sandbox', `exec --sandbox runs on Linux and macOS, not ${ctx.platform}`);
  }
  const [{ prepareSandbox }, { runChild }] = await Promise.all([
    import('../exec/sandbox-plan.js'),
    import('../exec/run-child.js'),
  ]);
  let prepared: ReturnType<typeof prepareSandbox>;
  try {
    prepared = prepareSandbox(
      {},
      { env: ctx.env, platform: ctx.platform, cwd: process.cwd(), configDirs: await configDirs(ctx) },
    );
  } catch (error) {
    const packages = isMmauthError(error) ? error.details.packages : undefined;
    return warn(
      'sandbox',
      isMmauthError(error)
        ? error.message.replace('exec --sandbox cannot run the program', 'exec --sandbox is unavailable')
        : String(error),
      packages === undefined
        ? 'run it on Linux or macOS'
        : `install ${packages} (Debian and Ubuntu: apt install ${packages})`,
    );
  }
  try {
    const lines: string[] = [];
    const code = await runChild(
      'true',
      [],
      { PATH: ctx.env.PATH ?? '/usr/bin:/bin' },
      (line) => lines.push(line),
      '',
      prepared.policyFor([], []),
    );
    if (code !== 0)
      throw new Error(`true exited ${code} in the sandbox${lines.length > 0 ? `: ${lines.join(' ')}` : ''}`);
  } catch (error) {
    return warn(
      'sandbox',
      `exec --sandbox is unavailable: ${isMmauthError(error) ? error.message : String(error)}`,
      'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or run where they are allowed',
    );
  } finally {
    prepared.remove();
  }
  return ok(
    'sandbox',
    'exec --sandbox works (sandbox-runtime: writes only in the working directory, no config, keyring, Unix socket or other host in reach)',
  );
}
