import { defineConfig } from 'vitest/config';
import { e2eMode } from './test/e2e/gate.js';

// Fails at once on a SIMHASH_E2E value other than unset, 0 or 1.
e2eMode();

// The whole suite runs twice: against the SIMD build and against the scalar build. The e2e tests (test/e2e/) run
// once, in simd; the last lines of every run that includes them say which ran and which were skipped, and why.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    reporters: ['default', './test/e2e/summary-reporter.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Tests of FinalizationRegistry cleanup call gc().
    execArgv: ['--expose-gc'],
    projects: [
      { extends: true, test: { name: 'simd', env: { SIMHASH_BUILD: 'simd' } } },
      { extends: true, test: { name: 'scalar', env: { SIMHASH_BUILD: 'scalar' } } },
    ],
  },
});
