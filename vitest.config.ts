import { defineConfig } from 'vitest/config';

// The whole suite runs twice: against the SIMD build and against the scalar build.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
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
