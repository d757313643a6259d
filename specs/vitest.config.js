import { defineConfig } from 'vitest/config';

// Linting a whole group takes seconds, more on a busy 2-core machine running other suites.
export default defineConfig({ test: { testTimeout: 60_000 } });
