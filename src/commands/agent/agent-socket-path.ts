import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MmauthError } from '../../errors.js';
import { privateParent } from '../../exec/token-file.js';

/**
 * The agent's default socket: `agent-<12 hex of the config directory's path>.sock` in the user's
 * private `mmauth-agent-<uid>` directory under XDG_RUNTIME_DIR or the temporary directory
 * (privateParent): one agent per user and config directory, found again by a second start.
 */
export function defaultAgentSocket(env: NodeJS.ProcessEnv, configDir: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const id = createHash('sha256').update(configDir).digest('hex').slice(0, 12);
  return join(privateParent(env), `mmauth-agent-${uid}`, `agent-${id}.sock`);
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
  const stats = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : stats.uid;
  if (!stats.isDirectory() || stats.uid !== uid || (stats.mode & 0o077) !== 0) {
    throw new MmauthError(
      'store_insecure',
      `the agent's directory ${dir} is not a private directory of yours (mode 0700, owned by you, no link)`,
      { hint: 'remove it, or pass --socket with a path in a directory only you can reach' },
    );
  }
}
