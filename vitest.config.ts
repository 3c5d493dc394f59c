import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/fuzz-defaults.ts'],
    // Two cores in CI: forks keep native addons (koffi, better-sqlite3) isolated per worker.
    pool: 'forks',
    // Vitest's default is one fork fewer than the cores, i.e. a single fork on two cores. Many tests wait on real
    // processes and timers, so two forks nearly halve the suite's wall time there.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The adversarial suite ends with one line counting its cases, hangs, stack traces, lost records and escapes.
    reporters: ['default', './test/adversarial/summary-reporter.ts'],
  },
});
