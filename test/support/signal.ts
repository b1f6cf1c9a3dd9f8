/**
 * Sends `signal` to process `pid`, and only to one process: a pid that is not a positive integer
 * (an empty pid file read as 0, a child that never started) throws instead of reaching kill(2),
 * where 0 means this process's whole group (the test runner, npm and CI's own script) and -1 every
 * process this user may signal. `quiet`: a process already gone is no error.
 */
export function signalPid(pid: number | undefined, signal: NodeJS.Signals | 0, quiet = false): void {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) {
    throw new Error(`refusing to signal pid ${String(pid)}: not one process`);
  }
  try {
    process.kill(pid, signal);
  } catch (error) {
    if (!quiet || (error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
