import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only contend for the database.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a one-line 'N passed, N failed' summary.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
