import { defineConfig } from 'vitest/config';

// One server for the whole suite (a child process, as a user runs it); the fuzzing itself is
// bounded by FUZZ_RUNS per operation.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 240_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
