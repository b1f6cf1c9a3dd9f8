import type { PreparedSandbox } from './sandbox-plan.js';

/**
 * The child's environment (README "exec"): the parent's without the client secret, plus the token's
 * variables. In the sandbox also without SANDBOX_UNSET_ENV, and without the Unix sockets' variables
 * (no Unix socket of the host is reachable there: the URLs serve instead).
 */
export function childEnvironment(
  env: NodeJS.ProcessEnv,
  added: Record<string, string>,
  sandbox?: PreparedSandbox,
): NodeJS.ProcessEnv {
  const parent: NodeJS.ProcessEnv = { ...env };
  // Secret-looking variables of the user's stay outside the sandbox; mmauth's own are added after.
  for (const name of sandbox?.heldBackEnv ?? []) delete parent[name];
  const unset = sandbox?.unsetEnv ?? [];
  const child: NodeJS.ProcessEnv = { ...parent, ...sandbox?.addedEnv, ...added };
  delete child.MMAUTH_CLIENT_SECRET;
  delete child.MMAUTH_TOKEN;
  if (added.MMAUTH_TOKEN !== undefined) child.MMAUTH_TOKEN = added.MMAUTH_TOKEN;
  for (const name of unset) delete child[name];
  return child;
}
