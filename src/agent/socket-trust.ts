import { realpathSync, statSync, readFileSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { MmauthError } from '../errors.js';

/**
 * Whether an agent socket may be spoken to (attack A5), as OpenSSH's client checks a socket before
 * it speaks: only a socket this user (or root) owns, reached through directories that no other
 * user could have used to put it there. Checked on the path's real location (links resolved).
 */

/** The longest path a Unix socket address holds (sun_path, 108 bytes with its NUL on Linux). */
const MAX_SOCKET_PATH_BYTES = 108;

/** This process's uid; where there is none (Windows), undefined and no check applies. */
const myUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** The login name of `uid` from /etc/passwd, or undefined (a name makes the message readable). */
function userName(uid: number): string | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id === String(uid) && name !== undefined && name !== '') return name;
    }
  } catch {
    // No /etc/passwd (a minimal container): the uid alone.
  }
  return undefined;
}

const ownerOf = (uid: number): string => {
  const name = userName(uid);
  return name === undefined ? `uid ${uid}` : `${name} (uid ${uid})`;
};

/** Writable by a group or by others. */
const isSharedWritable = (stats: Stats): boolean => (stats.mode & 0o022) !== 0;
/** The sticky bit: only an entry's owner may rename or remove it. */
const isSticky = (stats: Stats): boolean => (stats.mode & 0o1000) !== 0;

/** Why `socketPath` is not to be trusted by user `uid`, in words, or undefined when it may be. */
export function socketDistrust(socketPath: string, uid: number): string | undefined {
  return judgeSocket(socketPath, uid).why;
}

/**
 * The real location of `socketPath` (links resolved; undefined when it is missing) and why user
 * `uid` may not trust it (undefined when it may). A trusted real location is one no other user can
 * change: every directory on the way is this user's or root's and writable by nobody else unless
 * sticky, so connecting to that location (never again to the path given, whose links another user
 * may flip meanwhile) reaches the socket judged.
 */
function judgeSocket(socketPath: string, uid: number): { real: string | undefined; why: string | undefined } {
  let real: string;
  let socket: Stats;
  try {
    real = realpathSync(socketPath);
    socket = statSync(real);
  } catch {
    // Missing: the connection says so (agent_unreachable); nothing was there to trust.
    return { real: undefined, why: undefined };
  }
  return { real, why: distrustOf(real, socket, uid) };
}

/** Why the socket at real location `real` (its `socket` stats) is not to be trusted by `uid`, or undefined. */
function distrustOf(real: string, socket: Stats, uid: number): string | undefined {
  if (!socket.isSocket()) return `${real} is not a socket`;
  // Root may use another user's socket bound into a directory only root can write (a container's
  // bind mount at /run/mmauth.sock): no other user could have put it there.
  const isOwnersOwn = socket.uid === uid || socket.uid === 0;
  if (!isOwnersOwn && (uid !== 0 || isSharedWritable(statSync(dirname(real))))) {
    return `the socket ${real} belongs to ${ownerOf(socket.uid)}, not to you`;
  }
  // Each directory on the way: ours or root's, and writable by nobody else unless sticky; the
  // socket's own sticky directory only when the socket is ours (root's entry there could be anyone's).
  let dir = dirname(real);
  let isParent = true;
  for (;;) {
    const stats = statSync(dir);
    if (stats.uid !== uid && stats.uid !== 0) return `the directory ${dir} belongs to ${ownerOf(stats.uid)}`;
    if (isSharedWritable(stats)) {
      if (!isSticky(stats)) return `the directory ${dir} is writable by other users`;
      if (isParent && socket.uid !== uid) return `the socket ${real} is root's, in ${dir}, which every user can write`;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
    isParent = false;
  }
}

/**
 * The path to connect to for the agent socket at `socketPath`: its real location, judged once
 * (judgeSocket), so that a link another user flips after the check leads nowhere else. Throws
 * `agent_untrusted` (exit 3) when the socket is not this user's (or root's), or lies where another
 * user could have put it; nothing has been sent to it then. A missing path is returned as given:
 * connecting to it fails as `agent_unreachable`. Without uids (Windows), or when the real location
 * is too long for a socket address, the path as given.
 */
export function assertTrustedSocket(socketPath: string): string {
  const uid = myUid();
  if (uid === undefined) return socketPath;
  const { real, why } = judgeSocket(socketPath, uid);
  // A real location longer than a socket address holds (108 bytes) is reached by the path given.
  if (why === undefined)
    return real !== undefined && Buffer.byteLength(real) < MAX_SOCKET_PATH_BYTES ? real : socketPath;
  throw new MmauthError('agent_untrusted', `not using the agent socket ${socketPath}: ${why}`, {
    details: { socket: socketPath },
  });
}
