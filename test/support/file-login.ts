import { expect } from 'vitest';
import { HEADLESS_BROWSER, makeConfigDir, runCli } from './cli.js';
import { startTestEmulator, type TestEmulator } from './emulator.js';

/**
 * A code-flow profile signed in at a fresh emulator (auto-approving), credentials in the file: the
 * emulator and the environment that runs mmauth against it (PATH kept, nothing else of the shell's).
 */
export async function fileLogin(): Promise<{ emulator: TestEmulator; env: Record<string, string> }> {
  const emulator = await startTestEmulator({ autoApprove: true });
  const env = {
    ...(emulator.env(makeConfigDir(), { BROWSER: HEADLESS_BROWSER }) as Record<string, string>),
    MMAUTH_CREDENTIAL_STORE: 'file',
    PATH: process.env.PATH ?? '',
  };
  expect((await runCli(['login'], { env })).code).toBe(0);
  return { emulator, env };
}
