import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { classifyTests, TIERS } from './test/tiers/classify.js';

const tiers = classifyTests(fileURLToPath(new URL('.', import.meta.url)));

/** What every tier shares; each tier is a vitest project (`vitest run --project unit`). */
const shared: TestProjectInlineConfiguration['test'] = {
  globalSetup: ['test/global-setup.ts'],
  setupFiles: ['test/setup/fuzz-defaults.ts'],
  // Two cores in CI: forks keep native addons (koffi, better-sqlite3) isolated per worker.
  pool: 'forks',
  testTimeout: 20_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // The tiers (test/tiers/classify.ts): unit (pure, seconds), e2e (real processes, the fake driver), torch
    // (real PyTorch), browser (real Chromium and Firefox). `vitest run` runs them all.
    projects: TIERS.map((name) => ({ test: { ...shared, name, include: tiers[name] } })),
    // Vitest's default is one fork fewer than the cores, i.e. a single fork on two cores. Many tests wait on real
    // processes and timers, so two forks nearly halve the suite's wall time there. One pool serves every tier.
    maxWorkers: 2,
    minWorkers: 1,
    // The adversarial suite ends with one line counting its cases, hangs, stack traces, lost records and escapes.
    reporters: ['default', './test/adversarial/summary-reporter.ts'],
  },
});
