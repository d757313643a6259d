import { defineConfig } from 'vitest/config';

// Timeouts sized for a 2-core CI machine: starting four Prism processes takes a few seconds
// there (up to 60 s allowed), a request to the mock well under a second.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['./support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    teardownTimeout: 20_000,
    // Test files share the mocks (one Prism per host role); two workers match two cores.
    pool: 'forks',
    maxWorkers: 2,
  },
});
