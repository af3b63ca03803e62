import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The tests that run the real `sentinel` run the compiled one: built from the sources first.
    globalSetup: ['test/support/build-cli.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start servers and Chromium; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // The JSON results let .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-results.json' },
  },
});
