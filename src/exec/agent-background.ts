import { spawn } from 'node:child_process';
import { MmauthError } from '../errors.js';

/** How long a background start waits for the agent to listen, in ms. */
const START_TIMEOUT_MS = 15_000;

/**
 * Starts `mmauth agent --foreground --json ARGS` detached (a session of its own, stdin and stderr
 * closed, `env` without MMAUTH_AGENT_SOCK) and resolves with the socket and pid it prints once it
 * listens, or rejects with its error document's message (bounded: START_TIMEOUT_MS). The agent
 * outlives this process, as ssh-agent does.
 */
export async function startAgentInBackground(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ socket: string; pid: number }> {
  const launcher = process.argv[1] ?? '';
  const child = spawn(process.execPath, [launcher, 'agent', '--foreground', '--json', ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...env, MMAUTH_AGENT_SOCK: '' },
  });
  let out = '';
  try {
    return await new Promise<{ socket: string; pid: number }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new MmauthError('unexpected', `the agent did not start within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n')[0] ?? '';
        if (!out.includes('\n')) return;
        clearTimeout(timer);
        try {
          const json = JSON.parse(line) as {
            socket?: unknown;
            pid?: unknown;
            error?: { code?: string; message?: string };
          };
          if (typeof json.socket === 'string' && typeof json.pid === 'number')
            resolve({ socket: json.socket, pid: json.pid });
          else reject(new MmauthError('unexpected', `the agent could not start: ${json.error?.message ?? line}`));
        } catch {
          reject(new MmauthError('unexpected', `the agent could not start: ${line}`));
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new MmauthError('unexpected', `the agent exited at start (code ${String(code)}): ${out.trim()}`));
      });
    });
  } finally {
    child.stdout.destroy();
    child.unref();
  }
}
