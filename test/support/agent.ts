import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BIN, HEADLESS_BROWSER, makeConfigDir, makeScratchDir, runCli, startCli, type RunningCli } from './cli.js';
import { startDoorkeeper, type DoorkeeperOptions } from './doorkeeper.js';
import type { TestEmulator } from './emulator.js';

/**
 * A short socket path of the test's own (Unix sockets allow about 100 bytes), in a private directory
 * removed when the test ends. Named `prefix`: not an agent's own `mmauth-agent-*` unless asked, since
 * every sandboxed run of the suite hides those, and one removed while it sets up makes it start again.
 */
export function agentSocketPath(prefix = 'mmauth-sock-'): string {
  return join(makeScratchDir(prefix, 0o700), 'agent.sock');
}

/**
 * Two profiles at `emulator` in a fresh config directory (file store): `work` (code flow, refresh
 * token) and `other` (client credentials); the environment that reaches them (secret included).
 */
export async function hostProfiles(
  emulator: TestEmulator,
): Promise<{ configDir: string; env: Record<string, string> }> {
  const configDir = makeConfigDir();
  const env = {
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
    MMAUTH_CREDENTIAL_STORE: 'file',
  };
  const loginEnv = emulator.env(configDir, { BROWSER: HEADLESS_BROWSER, MMAUTH_CREDENTIAL_STORE: 'file' });
  expect((await runCli(['login', '--profile', 'work'], { env: loginEnv })).code).toBe(0);
  expect((await runCli(['client-credentials', '--profile', 'other'], { env: loginEnv })).code).toBe(0);
  return { configDir, env };
}

/** `mmauth agent --foreground --json --socket SOCKET ARGS`, ended with the test; resolves once it listens. */
export async function startAgent(
  env: Record<string, string>,
  args: string[] = ['--profile', 'work'],
  socket = agentSocketPath(),
): Promise<{ agent: RunningCli; socket: string; pid: number }> {
  const agent = startCli(['agent', '--foreground', '--json', '--socket', socket, ...args], { env, timeoutMs: 120_000 });
  const [line] = await agent.waitForStdout(/\{"schema_version":1,"socket":"[^"]+","pid":\d+\}/, 15_000);
  const { pid } = JSON.parse(line) as { pid: number };
  return { agent, socket, pid };
}

/** An environment with nothing of the host's grant: an empty config directory, another HOME, the agent's socket. */
export function farSideEnv(socket: string): Record<string, string> {
  const home = makeScratchDir('mmauth-far-home-');
  const configDir = join(home, 'config');
  mkdirSync(configDir, { mode: 0o700 });
  return { MMAUTH_AGENT_SOCK: socket, MMAUTH_CONFIG_DIR: configDir, HOME: home };
}

export { BIN };

/**
 * A real Doorkeeper (`startDoorkeeper` options), the profile `work` signed in there by the code flow
 * (file store), and `mmauth agent --foreground` serving it: the server, the config directory, the socket.
 */
export async function doorkeeperAgent(options: DoorkeeperOptions = {}) {
  const doorkeeper = await startDoorkeeper(options);
  const configDir = makeConfigDir();
  const login = await runCli(['login', '--profile', 'work'], {
    env: doorkeeper.env(configDir, { BROWSER: HEADLESS_BROWSER }),
    timeoutMs: 60_000,
  });
  expect(login.code, login.stderr).toBe(0);
  const { socket } = await startAgent({
    MMAUTH_CONFIG_DIR: configDir,
    MMAUTH_CLIENT_SECRET: doorkeeper.clientSecret,
    MMAUTH_CREDENTIAL_STORE: 'file',
  });
  return { doorkeeper, configDir, socket };
}
