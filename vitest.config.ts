import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every test that waits has its own bound; these are the outer limits.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'threads',
    // Two cores: spawned binaries and servers run beside the workers.
    maxWorkers: 2,
  },
});
