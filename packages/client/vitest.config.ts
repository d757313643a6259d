import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Functional tests, some over large inputs: the default 5 s is too short on a busy 2-core CI machine.
    testTimeout: 30_000,
    include: ['test/**/*.test.ts'],
    typecheck: {
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
  },
});
