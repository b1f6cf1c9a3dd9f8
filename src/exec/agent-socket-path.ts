import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MmauthError } from '../errors.js';
import { isPrivateDirectory, myUid, privateParent, recordRuntimeParent } from './token-file.js';
import { replacePrivateFile } from '../util/private-file.js';

/** The file in the config directory that records where its agent listens when XDG_RUNTIME_DIR is unset. */
export const AGENT_RECORD = 'agent-socket';

/**
 * The agent's default socket for the config directory `configDir` (one agent per user and config
 * directory, found again by a second start):
 * - with XDG_RUNTIME_DIR (a private directory of this user's): `agent-<12 hex of configDir>.sock`
 *   in `mmauth-agent-<uid>/` there;
 * - else in a fresh private directory made with mkdtemp (`mmauth-agent-XXXXXX` in the temporary
 *   directory, as ssh-agent's `/tmp/ssh-XXXXXX`), whose path is recorded in `configDir/agent-socket`
 *   (0600) so that a second start finds it. A recorded directory that is no longer a private one of
 *   this user's is replaced. A name another user took first in the shared directory takes nothing.
 * Throws `store_insecure` from privateParent.
 */
export function defaultAgentSocket(env: NodeJS.ProcessEnv, configDir: string): string {
  const parent = privateParent(env);
  // A parent none of the usual places: recorded, so that a sandbox started elsewhere hides it too.
  recordRuntimeParent(parent);
  if (parent === env.XDG_RUNTIME_DIR) {
    const id = createHash('sha256').update(configDir).digest('hex').slice(0, 12);
    return join(parent, `mmauth-agent-${myUid(0)}`, `agent-${id}.sock`);
  }
  const record = join(configDir, AGENT_RECORD);
  try {
    const recorded = readFileSync(record, 'utf8').trim();
    if (recorded.startsWith('/') && isPrivateDirectory(dirname(recorded))) return recorded;
  } catch {
    // No record yet: a new directory below.
  }
  const dir = mkdtempSync(join(parent, 'mmauth-agent-'));
  const socket = join(dir, 'agent.sock');
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  replacePrivateFile(record, `${socket}\n`);
  return socket;
}

/**
 * Makes sure the socket's directory is this user's alone: created 0700 when missing; an existing one
 * must be a directory (not a link) owned by this user with mode 0700. Throws `store_insecure` naming
 * it otherwise: another user could replace the socket or read what crosses it.
 */
export function preparePrivateDirectory(socketPath: string): void {
  const dir = dirname(socketPath);
  try {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (!isPrivateDirectory(dir)) {
    throw new MmauthError(
      'store_insecure',
      `the agent's socket must be in a private directory of yours: ${dir} is not one (it must be a directory, not a link, owned by you, mode 0700)`,
      {
        hint: `pass --socket with a path in a directory you made for it (mkdir -m 700 ~/.mmauth; --socket ~/.mmauth/agent.sock), or fix ${dir} with chmod 700 if it is yours`,
      },
    );
  }
}
