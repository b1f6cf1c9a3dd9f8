import { closeSync, constants, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isAlive } from '../util/process-alive.js';

// Which processes hand a profile's token to programs (`exec`), so that a renewal by any process
// gives them a moment to switch before the new token's first presentation ends the old one on a
// rotating server (as servers of the family do). One empty file per
// follower, `<profile>.<pid>`, in `followers/` beside the config file; a dead pid counts for nothing.

/** The folder of follower marks beside the config file at `configPath`. */
function followersDir(configPath: string): string {
  return join(dirname(configPath), 'followers');
}

/**
 * Marks this process as a follower of profile `profileName` (0600, never through a link); returns
 * the function that removes the mark. Never throws: without a mark, renewals just do not wait.
 */
export function markFollower(configPath: string, profileName: string): () => void {
  const path = join(followersDir(configPath), `${profileName}.${process.pid}`);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
  } catch {
    return () => undefined;
  }
  return () => rmSync(path, { force: true });
}

/** Whether any live process, this one included, follows profile `profileName`. */
export function hasFollowers(configPath: string, profileName: string): boolean {
  let names: string[];
  try {
    names = readdirSync(followersDir(configPath));
  } catch {
    return false;
  }
  const prefix = `${profileName}.`;
  return names.some((name) => {
    if (!name.startsWith(prefix)) return false;
    const pid = Number(name.slice(prefix.length));
    return Number.isInteger(pid) && pid > 0 && isAlive(pid);
  });
}
