import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Without a terminal (CI, a log) the default reporter gets a progress line after each file; --reporter on the
    // command line replaces this list (.ci/run names the progress reporter itself).
    reporters: process.stdout.isTTY ? ['default'] : ['default', './test/progress-reporter.ts'],
  },
})
