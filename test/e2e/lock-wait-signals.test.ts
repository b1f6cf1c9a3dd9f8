/**
 * A wait before anything is sent is interruptible (decisions 68): a command waiting for the config
 * lock another live process holds ends at Ctrl-C, SIGTERM and SIGHUP within a second, with the
 * signal's exit code, having sent nothing; only a request already sent is waited for (decisions 62).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeConfigDir, runCli, startCli } from '../support/cli.js';
import { readConfigText, startTestEmulator } from '../support/emulator.js';

const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const;

const COMMANDS = [['client-credentials'], ['refresh'], ['token']] as const;

const CASES = COMMANDS.flatMap(([command]) => SIGNALS.map(([signal, code]) => [command, signal, code] as const));

describe('a wait for the config lock ends at a signal', () => {
  it.each(CASES)(
    '`mmauth %s` waiting for a lock another process holds: %s ends it within a second (exit %i), nothing sent',
    async (command, signal, code) => {
      const emulator = await startTestEmulator();
      const configDir = makeConfigDir();
      const env = emulator.env(configDir, { MMAUTH_CREDENTIAL_STORE: 'file' });
      const first = await runCli(['client-credentials'], { env });
      expect(first.code, first.stderr).toBe(0);
      if (command === 'token') {
        // An expired token: `token` must renew it, and so waits for the lock first.
        const path = join(configDir, 'config.json');
        const config = JSON.parse(readConfigText(configDir) ?? '{}');
        config.profiles.default.token.expires_at = new Date(Date.now() - 1_000).toISOString();
        writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
      }
      const before = readConfigText(configDir);
      const release = await lock(join(configDir, 'config.json'), { realpath: false, stale: 10_000, update: 2_000 });
      onTestFinished(() => release().catch(() => undefined));
      const requestsBefore = emulator.requests.length;
      const running = startCli([command], { env, timeoutMs: 90_000 });
      await running.waitForStderr(/waiting for the config lock/, 15_000);
      const signalledAt = Date.now();
      running.child.kill(signal);
      const result = await running.done;
      const tookMs = Date.now() - signalledAt;
      expect(result.code, result.stderr).toBe(code);
      expect(tookMs, 'from the signal to the exit').toBeLessThan(1_000);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/error: interrupted/);
      expect(emulator.requests.slice(requestsBefore).map((request) => request.url)).toEqual([]);
      await release();
      expect(readConfigText(configDir)).toBe(before);
    },
    60_000,
  );
});
