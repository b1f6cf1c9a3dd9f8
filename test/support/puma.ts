import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** What the Rack app saw: the method after Rack::MethodOverride, the path, Authorization, the body. */
export interface RackRequest {
  method: string;
  path: string;
  authorization: string | null;
  body: string;
}

/** A running puma serving `test/support/rack/recorder.ru` on 127.0.0.1. */
export interface RackServer {
  baseUrl: string;
  /** Every request the app was handed, in order. */
  seen(): Promise<RackRequest[]>;
}

/**
 * Starts Debian's puma (5.6, Rack 2.2: the service family's stack) on 127.0.0.1 port 0 with the
 * recording Rack app, Rack::MethodOverride in front; stopped when the test ends. Fails (never
 * skips) when puma is missing: `.ci/run` installs it.
 */
export async function startRackServer(): Promise<RackServer> {
  const app = join(import.meta.dirname, 'rack', 'recorder.ru');
  const child = spawn('puma', ['-b', 'tcp://127.0.0.1:0', '-t', '1:4', '-e', 'production', '--quiet', app], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`puma did not listen within 15 s:\n${output}`)), 15_000);
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`puma could not start (Debian's puma and ruby-rack; .ci/run installs them): ${error.message}`));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`puma exited with ${String(code)}:\n${output}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    seen: async () => (await (await fetch(`${baseUrl}/__seen`)).json()) as RackRequest[],
  };
}
