// The linter: typescript-eslint with type information (tsconfig.json's project), for the bugs a
// formatter and the compiler do not catch in code full of async filesystem calls: a promise nobody
// awaits (a crash-safe write sequence turned into an unordered one), a promise where a callback's
// return value is ignored, `await` of what is not a promise, a `return await` outside try. `npm run lint`.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-check/**',
      'node_modules/**',
      'bench/work/**',
      'fixtures/**',
      'conformance/**',
      'test/harnesses/.payloads/**',
      'test/package/consumer/**',
      '**/*.cjs',
      '**/*.mjs',
      'vitest.*.ts',
    ],
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-for-in-array': 'error',
    },
  },
);
