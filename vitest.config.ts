import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/fuzz-defaults.ts'],
    // Two cores in CI: forks keep native addons (koffi, better-sqlite3) isolated per worker.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The adversarial suite ends with one line counting its cases, hangs, stack traces, lost records and escapes.
    reporters: ['default', './test/adversarial/summary-reporter.ts'],
  },
});
