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
    // Worker processes, not threads: a test spawns thousands of processes, and a spawn costs its
    // parent a copy of its page tables (8 ms from a 46 MiB process, 35 ms from 1.3 GiB here): one
    // process holding every worker pays that for all of them, and they wait on each other.
    pool: 'forks',
    // Four on two cores: the suites mostly wait on spawned processes and servers (two workers kept
    // one core busy on average; four, 1.5 cores: 680 s for the whole suite instead of 830 s).
    maxWorkers: 4,
  },
});
