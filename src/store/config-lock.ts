import { closeSync, constants, lstatSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { readRegularFile } from '../util/read-regular-file.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import { assertSafePath } from './path-safety.js';
import { isAlive } from '../util/process-alive.js';

/** The longest a holder may keep the lock for a request it makes under it (a renewal, whose budget is 60 s), in ms. */
export const LOCK_HOLD_MAX_MS = 60_000;

/** How long a waiter waits for the lock: longer than any holder may keep it (LOCK_HOLD_MAX_MS), in ms. */
export const LOCK_WAIT_MS = LOCK_HOLD_MAX_MS + 15_000;

/** How long a waiter stays silent before it says who holds the lock, in ms. */
const QUIET_WAIT_MS = 1_000;

/** Beside the lock (never inside: proper-lockfile removes a stale lock with rmdir), the holder's pid. */
function pidFileOf(lockPath: string): string {
  return `${lockPath}.pid`;
}

/** Who holds a lock, for people: `held by pid N`, `left by pid N, which is gone`, or nothing known. */
function holderOf(lockPath: string): string | undefined {
  let pid: number;
  try {
    pid = Number(readRegularFile(pidFileOf(lockPath), 64).trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return isAlive(pid) ? `held by pid ${pid}` : `left by pid ${pid}, which is gone (taken over once 10 s old)`;
}

/** Whether something other than a directory (a regular file, a FIFO) stands where the lock goes. */
function isPlantedFile(lockPath: string): boolean {
  try {
    const stats = lstatSync(lockPath);
    return !stats.isDirectory() && !stats.isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Writes this process's pid beside the lock, never through a link: whatever stands there is
 * removed (a link itself, not its target), and the file is created exclusively with O_NOFOLLOW.
 */
function writePidFile(pidFile: string): void {
  try {
    removeIfThere(pidFile);
    const fd = openSync(
      pidFile,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      writeSync(fd, String(process.pid));
    } finally {
      closeSync(fd);
    }
  } catch {
    // The pid only makes a waiter's message more useful.
  }
}

function isFromTheFuture(lockPath: string): boolean {
  try {
    return statSync(lockPath).mtimeMs > Date.now() + 60_000;
  } catch {
    return false;
  }
}

/** Why a lock could not be had, in words that say what to do about the lock itself. */
function describeLockFailure(lockPath: string, error: unknown, nowMs: number): MmauthError {
  let why = error instanceof Error ? error.message : String(error);
  try {
    const mtimeMs = statSync(lockPath).mtimeMs;
    if (mtimeMs > nowMs + 60_000) {
      why = `has a time in the future (${new Date(mtimeMs).toISOString()}), so it never goes stale`;
    } else {
      why = `is ${holderOf(lockPath) ?? 'held by another mmauth'}`;
    }
  } catch {
    // The lock vanished meanwhile: report the original failure.
  }
  return new MmauthError('store_lock_failed', `cannot lock the config: ${lockPath} ${why}`, {
    cause: error,
    details: { lock: lockPath },
  });
}

/**
 * Takes the config file's exclusive lock (`<path>.lock`, proper-lockfile; stale after 10 s without
 * its holder's heartbeat, waited for LOCK_WAIT_MS), saying through `onWait` who holds it once a second has passed, and records this
 * process's pid beside it. Resolves with the release function. Throws `store_insecure` for a lock that
 * is a symbolic link, `store_lock_failed` naming the lock and why, and `interrupted` as soon as
 * `interrupt` aborts while waiting (nothing has been sent yet; a lock taken after
 * that is let go at once).
 */
export async function lockConfig(
  path: string,
  onWait: (message: string) => void,
  interrupt?: AbortSignal,
): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  assertSafePath(lockPath, 'lock');
  // A lock from the future never goes stale: waiting for it would only postpone the same failure.
  if (isFromTheFuture(lockPath)) throw describeLockFailure(lockPath, new Error('lock from the future'), Date.now());
  // mmauth's lock is a directory (proper-lockfile's mkdir): a file there was planted, and would be waited on for nothing.
  if (isPlantedFile(lockPath)) {
    throw new MmauthError(
      'store_lock_failed',
      `cannot lock the config: ${lockPath} is a file, not a lock mmauth made`,
      {
        details: { lock: lockPath },
      },
    );
  }
  const { lock } = await import('proper-lockfile');
  const notice = setTimeout(() => {
    const holder = holderOf(lockPath);
    onWait(`waiting for the config lock ${lockPath}${holder === undefined ? '' : ` (${holder})`}`);
  }, QUIET_WAIT_MS);
  try {
    const taking = lock(path, {
      // Its fs is plain node:fs in the bundle, not graceful-fs (scripts/build.mjs, an earlier change).
      realpath: false,
      stale: 10_000,
      update: 2_000,
      // Quick retries first, then every 300 ms: about LOCK_WAIT_MS in all.
      retries: {
        retries: Math.ceil(LOCK_WAIT_MS / 300) + 15,
        factor: 1.2,
        minTimeout: 10,
        maxTimeout: 300,
        randomize: true,
      },
    });
    const release = await untilAbortedOrTaken(taking, interrupt, lockPath);
    const pidFile = pidFileOf(lockPath);
    writePidFile(pidFile);
    return async () => {
      removeIfThere(pidFile);
      await release();
    };
  } catch (error) {
    if (hasErrorCode(error, 'interrupted')) throw error;
    throw describeLockFailure(lockPath, error, Date.now());
  } finally {
    clearTimeout(notice);
  }
}

/**
 * `taking` (proper-lockfile's wait, which cannot be cancelled), or `interrupted` as soon as
 * `interrupt` aborts; a lock taken after that is released at once, so that nobody waits on it.
 */
function untilAbortedOrTaken(
  taking: Promise<() => Promise<void>>,
  interrupt: AbortSignal | undefined,
  lockPath: string,
): Promise<() => Promise<void>> {
  if (interrupt === undefined) return taking;
  const stopped = () => new MmauthError('interrupted', `interrupted while waiting for the config lock ${lockPath}`);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(stopped());
      taking.then(
        (release) => release().catch(() => undefined),
        () => undefined,
      );
    };
    if (interrupt.aborted) return onAbort();
    interrupt.addEventListener('abort', onAbort, { once: true });
    taking.then(
      (release) => {
        interrupt.removeEventListener('abort', onAbort);
        resolve(release);
      },
      (error: unknown) => {
        interrupt.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Removes one file, gone already or not. unlink, not rmSync: Node 20's rmSync loads its rimraf and
 * node:assert (about 1.5 ms) on every renewal.
 */
function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
