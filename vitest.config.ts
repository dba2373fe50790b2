import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // The workspace packages import each other by name; tests run their sources
  // (as tsconfig.json's paths do for tsc and tsx). The consumer test checks the builds.
  resolve: {
    alias: [
      { find: /^@deviceid\/contract$/, replacement: source('./contract/index.ts') },
      { find: /^@deviceid\/client$/, replacement: source('./clients/node/index.ts') },
      { find: /^@deviceid\/client\/internal$/, replacement: source('./clients/node/internal.ts') },
      { find: /^@deviceid\/cli$/, replacement: source('./clients/cli/index.ts') },
      { find: /^@deviceid\/agent$/, replacement: source('./clients/agent/index.ts') },
      { find: /^@deviceid\/proxy$/, replacement: source('./clients/proxy/index.ts') },
    ],
  },
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
