import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
  // A working directory of its own: doctor is often run from the home directory, which no sandbox writes.
  const cwd = mkdtempSync(join(tmpdir(), 'mmauth-doctor-'));
  try {
    prepared = prepareSandbox({}, { env: ctx.env, platform: ctx.platform, cwd, configDirs: await configDirs(ctx) });
  } catch (error) {
    rmSync(cwd, { recursive: true, force: true });
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
      await prepared.runFor([], []),
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
    rmSync(cwd, { recursive: true, force: true });
  }
  return ok(
    'sandbox',
    `exec --sandbox works (sandbox-runtime: writes only in the working directory, no config, keyring, Unix socket or other host in reach)${bubblewrapNote(ctx)}`,
  );
}

/** The first bubblewrap release with the fix for a planted symlink followed during set-up (CVE-2026-87766). */
const FIXED_BWRAP = [0, 12, 0];

/**
 * `; bubblewrap X.Y.Z` on Linux, and for a release below 0.12.0 that CVE-2026-87766
 * (GHSA-pxhw-h44j-8pfx: set-up following a planted symlink onto the host) is fixed only there or in
 * a distribution's backport. Empty elsewhere or when `bwrap --version` says nothing.
 */
function bubblewrapNote(ctx: AppContext): string {
  if (ctx.platform !== 'linux') return '';
  const found = spawnSync('bwrap', ['--version'], { encoding: 'utf8', env: { PATH: ctx.env.PATH ?? '/usr/bin:/bin' } });
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(found.stdout ?? '');
  if (version === null) return '';
  const parts = version.slice(1, 4).map(Number);
  const isOlder = parts.some(
    (part, i) => parts.slice(0, i).every((p, j) => p === FIXED_BWRAP[j]) && part < (FIXED_BWRAP[i] ?? 0),
  );
  return isOlder
    ? `; bubblewrap ${version[0]}: CVE-2026-87766 (GHSA-pxhw-h44j-8pfx, set-up following a planted symlink onto the host) is fixed in 0.12.0 or a distribution's backport`
    : `; bubblewrap ${version[0]}`;
}
