import { defineConfig } from 'vitest/config';

// The browser tests start a server with its engine and Chromium once per file (a few seconds on 2 cores).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
  },
});
