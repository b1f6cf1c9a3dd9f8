import { readFileSync } from 'node:fs';
import { RUN_MARKER } from './sandbox-inner-command.js';

/** The child processes of `pid` (Linux's /proc), or none where it is gone or unreadable. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The program's own process among the descendants of `rootPid`: the first (nearest the root) whose
 * environment holds `marker` (the engine's own processes around it do not). Signals go to it, as
 * they went to the child of a plain `exec`; the engine's helpers in its session are left alone.
 */
export function programPid(rootPid: number, marker: string): number | undefined {
  const needle = `${RUN_MARKER}=${marker}\0`;
  const queue = [rootPid];
  for (let seen = 0; queue.length > 0 && seen < 256; seen++) {
    const pid = queue.shift() ?? 0;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(needle)) return pid;
    } catch {
      // Gone, or not ours to read: its children may still be.
    }
    queue.push(...childrenOf(pid));
  }
  return undefined;
}
