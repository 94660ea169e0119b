import { defineConfig } from 'vitest/config';

/**
 * `npm run bench:harness`: the hooks' share of a real Claude Code turn (bench/harness-share.test.ts),
 * a measurement on the harness tests' infrastructure (the CLIs installed by
 * scripts/install-harnesses.mjs, the scripted model). One run at a time: the machine's two cores
 * are the harness's, its hooks' and the server's.
 */
export default defineConfig({
  test: {
    include: ['bench/harness-share.test.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
});
