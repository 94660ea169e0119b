import { defineConfig } from 'vitest/config';

/** `npm run test:random`: the randomized differential tester's long run (test/random/random.test.ts, RANDOM_LONG=1). */
export default defineConfig({
  test: {
    include: ['test/random/random.test.ts'],
    testTimeout: 4 * 3600_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
