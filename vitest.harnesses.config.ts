import { defineConfig } from 'vitest/config';

/**
 * `npm run test:harnesses`: the real harness CLIs (test/harnesses/versions.json), installed into a
 * cache folder by scripts/install-harnesses.mjs, each driven by a scripted model server. One file
 * at a time (each test runs a harness, its hooks and git: two cores are busy enough), generous
 * timeouts (a harness process is killed by runProcess's own timeout first).
 */
export default defineConfig({
  test: {
    include: ['test/harnesses/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
