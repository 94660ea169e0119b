import { defineConfig } from 'vitest/config';

/**
 * `npm run test:random`: the randomized differential tester's shrunk sequences
 * (test/random/regressions.test.ts), then its long run (test/random/random.test.ts, RANDOM_LONG=1).
 */
export default defineConfig({
  test: {
    include: ['test/random/regressions.test.ts', 'test/random/random.test.ts'],
    sequence: { concurrent: false },
    fileParallelism: false,
    testTimeout: 4 * 3600_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
