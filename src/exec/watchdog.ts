import { spawn } from 'node:child_process';

/**
 * What the watchdog runs: it reads its stdin, a pipe from `exec`. `done` means exec ended its child
 * itself. End of input without it means exec died (a `kill -9` runs no clean-up of its own): the
 * child gets SIGTERM (SIGKILL 3 s later) and the private directory goes, so that no child outlives
 * its mmauth unnoticed, asking a port another user may have bound by then (attacks N7).
 */
const SCRIPT = `
const { rmSync } = require('node:fs');
const [pid, dir] = process.argv.slice(1);
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  if (input.includes('done')) process.exit(0);
  try { process.kill(Number(pid), 'SIGTERM'); } catch {}
  try { rmSync(dir, { recursive: true, force: true }); } catch {}
  setTimeout(() => { try { process.kill(Number(pid), 'SIGKILL'); } catch {} process.exit(0); }, 3000).unref();
});`;

/** A running watchdog; `release()` tells it exec ended the child itself (it exits, doing nothing). */
export interface Watchdog {
  release(): void;
}

/**
 * Starts the watchdog of `childPid` (a Node process of its own session, so the terminal's Ctrl-C
 * does not reach it; its stdin a pipe from this process). Never throws: without a watchdog, a
 * `kill -9` of exec leaves the child running, as before.
 */
export function startWatchdog(childPid: number, privateDir: string): Watchdog {
  try {
    const watchdog = spawn(process.execPath, ['-e', SCRIPT, String(childPid), privateDir], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      env: {},
    });
    watchdog.on('error', () => undefined);
    watchdog.stdin?.on('error', () => undefined);
    watchdog.unref();
    return {
      release() {
        watchdog.stdin?.end('done\n');
      },
    };
  } catch {
    return { release: () => undefined };
  }
}
