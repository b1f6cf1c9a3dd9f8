/**
 * Whether process `pid` exists: kill(2) with signal 0, which tests without signalling; EPERM
 * means it does (another user's, or a pid reused since). `pid` must be a positive integer: 0 and
 * negative numbers name process groups, and the answer would be about a group. Never throws.
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
