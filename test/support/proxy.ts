import { expect } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli, startCli } from './cli.js';
import type { TestEmulator } from './emulator.js';

/**
 * A code-flow profile signed in at `emulator` (file store; through `baseUrl`, a gate in front of it,
 * when given): its config directory, and the environment `mmauth proxy` then needs (the directory
 * and the secret for renewals, nothing else).
 */
export async function signIn(
  emulator: TestEmulator,
  baseUrl = emulator.baseUrl,
): Promise<{ configDir: string; env: Record<string, string> }> {
  const configDir = makeConfigDir();
  const loginEnv = emulator.env(configDir, {
    BROWSER: HEADLESS_BROWSER,
    MMAUTH_CREDENTIAL_STORE: 'file',
    MMAUTH_BASE_URL: baseUrl,
  });
  expect((await runCli(['login'], { env: loginEnv })).code).toBe(0);
  return { configDir, env: { MMAUTH_CONFIG_DIR: configDir, MMAUTH_CLIENT_SECRET: emulator.client.clientSecret } };
}

/** Starts `mmauth proxy --json ARGS` (ended with the test, or after `timeoutMs`); resolves once it listens, with its address. */
export async function startProxy(env: Record<string, string>, args: string[] = [], timeoutMs = 30_000) {
  const proxy = startCli(['proxy', '--json', ...args], { env, timeoutMs });
  const [line] = await proxy.waitForStdout(/\{"schema_version":1,"url":"[^"]+"[^}]*\}/);
  const url = (JSON.parse(line) as { url: string }).url;
  return { proxy, url, port: Number(new URL(url).port) };
}
