import { spawn } from 'node:child_process';

/**
 * What the watchdog runs: it reads its stdin, a pipe from `exec`. `done` means exec ended its child
 * itself. End of input without it means exec died (a `kill -9` runs no clean-up of its own): the
 * child and the sandbox engine's helpers get SIGTERM (SIGKILL 3 s later), the private directories
 * go, and so do the engine's sockets and the placeholders it made (only empty read-only files, and
 * a directory they leave empty), so that nothing of the run outlives its mmauth unnoticed, asking a
 * port another user may have bound by then (attacks N7).
 */
const SCRIPT = `
const { rmSync, lstatSync, readdirSync, rmdirSync } = require('node:fs');
const { dirname } = require('node:path');
const [pid, dir, extraJson] = process.argv.slice(1);
const extra = JSON.parse(extraJson || '{}');
const pids = [Number(pid), ...(extra.pids || [])];
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  if (input.includes('done')) process.exit(0);
  for (const p of pids) { try { process.kill(p, 'SIGTERM'); } catch {} }
  for (const d of [dir, ...(extra.dirs || [])]) { try { if (d) rmSync(d, { recursive: true, force: true }); } catch {} }
  for (const path of extra.placeholders || []) {
    try { const s = lstatSync(path); if (s.isFile() && s.size === 0 && (s.mode & 0o777) === 0o444) rmSync(path); } catch {}
    try { if (readdirSync(dirname(path)).length === 0 && path.split('/').length > 3) rmdirSync(dirname(path)); } catch {}
  }
  setTimeout(() => { for (const p of pids) { try { process.kill(p, 'SIGKILL'); } catch {} } process.exit(0); }, 3000).unref();
});`;

/** What else a watchdog ends and removes: the engine's helper processes, directories (its sockets' among them), placeholders. */
export interface WatchdogExtras {
  pids?: number[];
  dirs?: string[];
  placeholders?: string[];
}

/** A running watchdog; `release()` tells it exec ended the child itself (it exits, doing nothing). */
export interface Watchdog {
  release(): void;
}

/**
 * Starts the watchdog of `childPid` (a Node process of its own session, so the terminal's Ctrl-C
 * does not reach it; its stdin a pipe from this process), with `extras` (a sandbox's engine helpers,
 * temp dir, placeholders and sockets) to end and remove too. Never throws: without a watchdog, a
 * `kill -9` of exec leaves the child running, as before.
 */
export function startWatchdog(childPid: number, privateDir: string, extras: WatchdogExtras = {}): Watchdog {
  try {
    const watchdog = spawn(process.execPath, ['-e', SCRIPT, String(childPid), privateDir, JSON.stringify(extras)], {
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
