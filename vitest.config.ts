import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'properties/**/*.test.ts'],
    // the real harness CLIs: `npm run test:harnesses` (vitest.harnesses.config.ts); the random
    // tester's shrunk sequences (3–4 minutes): `npm run test:random` (vitest.random.config.ts)
    exclude: ['**/node_modules/**', 'test/harnesses/**', 'test/random/regressions.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
