// vitest for mutation testing (stryker.config.mjs): the suite's settings
// (global database set-up, timeouts) with only the test files of one group.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: { ...base.test, include: (process.env.MUTATION_TESTS ?? '').split(',').filter(Boolean), reporters: ['default'] },
});
