import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'properties/**/*.test.ts'],
    // the real harness CLIs: `npm run test:harnesses` (vitest.harnesses.config.ts)
    exclude: ['**/node_modules/**', 'test/harnesses/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
