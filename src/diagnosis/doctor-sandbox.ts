import type { AppContext } from '../context.js';
import { isMmauthError } from '../errors.js';
import { busSocketPaths, findBwrap } from '../exec/sandbox.js';
import { ok, skip, warn, type Check } from './doctor-checks.js';

/** How long the probe may take, in ms. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether `exec --sandbox` works here and why not: Linux only, bubblewrap on PATH, a sandbox it can
 * set up (a PID namespace: user namespaces allowed), and a session bus a path can hide.
 */
export async function checkSandbox(ctx: AppContext): Promise<Check> {
  if (ctx.platform !== 'linux') return skip('sandbox', `exec --sandbox runs on Linux only, not ${ctx.platform}`);
  const bwrap = findBwrap(ctx.env);
  if (bwrap === undefined) {
    return warn(
      'sandbox',
      'exec --sandbox is unavailable: bubblewrap (bwrap) is not on PATH',
      'install bubblewrap (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)',
    );
  }
  const { execFile } = await import('node:child_process');
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(
      bwrap,
      ['--ro-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--', 'true'],
      { timeout: PROBE_TIMEOUT_MS },
      (error, _out, err) => resolve(error === null ? undefined : (err.trim().split('\n')[0] ?? error.message)),
    );
  });
  if (failure !== undefined) {
    return warn(
      'sandbox',
      `exec --sandbox is unavailable: bubblewrap cannot set up a sandbox here (${failure})`,
      'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or run where they are allowed',
    );
  }
  try {
    busSocketPaths(ctx.env);
  } catch (error) {
    const why = isMmauthError(error) ? error.message : String(error);
    return warn(
      'sandbox',
      `exec --sandbox refuses to run here: ${why}`,
      'use a session bus that listens on a path (unix:path=…)',
    );
  }
  return ok('sandbox', `exec --sandbox works (${bwrap}: its own PID namespace, the config and keyring hidden)`);
}
