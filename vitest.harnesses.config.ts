import { defineConfig } from 'vitest/config';

/**
 * `npm run test:harnesses`: the real harness CLIs (test/harnesses/versions.json), installed into a
 * cache folder by scripts/install-harnesses.mjs, each driven by a scripted model server. One file
 * at a time, and at most two harness runs at once inside a file (tests marked it.concurrent; each
 * run is a harness, its hook processes and git: two cores are busy enough), generous timeouts (a
 * harness process is killed by runProcess's own timeout first).
 */
export default defineConfig({
  test: {
    include: ['test/harnesses/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    // a file's it.concurrent tests: two harness runs at a time (each mostly waits on its hooks)
    maxConcurrency: 2,
  },
});
