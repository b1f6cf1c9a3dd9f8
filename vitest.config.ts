import { defineConfig } from 'vitest/config';

// No test may touch a developer's real keyring: without a session bus address, the keyring addon
// finds none. The keyring suites start their own bus and Secret Service and pass its address.
delete process.env.DBUS_SESSION_BUS_ADDRESS;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The developer's MMAUTH_* and proxy variables never reach a test (test/setup.ts).
    setupFiles: ['test/setup.ts'],
    // Every test that waits has its own bound; these are the outer limits, which only catch a hang:
    // a test of several bounded steps took 35 s beside three other busy workers on two cores.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'threads',
    // Two cores: spawned binaries and servers run beside the workers.
    maxWorkers: 2,
  },
});
