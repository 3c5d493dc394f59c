/**
 * Runs once before the suite. Builds the native test doubles (the fake libnvidia-ml.so.1), the snapshot
 * fixtures and dist/ (for the end-to-end tests), and installs Chromium and Firefox (browser tests) and Prometheus
 * (/metrics tests) from Debian's packages when it can,
 * so that a fresh clone needs nothing but `npm ci`. Each builder registers itself in test/setup/.
 */
import type { TestProject } from 'vitest/node';
import { buildAll } from './setup/index.js';
import { ensureChromium, ensureFirefox, ensurePrometheus, skipBanner } from './setup/chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the browser test cannot run; empty when Chromium is there. */
    chromiumMissing: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  await buildAll();
  const noPrometheus = ensurePrometheus();
  if (noPrometheus) process.stderr.write(`test setup: ${noPrometheus}; the /metrics tests will fail\n`);
  const noFirefox = ensureFirefox();
  if (noFirefox) process.stderr.write(`test setup: ${noFirefox}; the page's Firefox test will fail\n`);
  const missing = ensureChromium() ?? '';
  project.provide('chromiumMissing', missing);
  if (missing) process.stderr.write(skipBanner(missing));
  return () => {
    if (missing) process.stderr.write(skipBanner(missing));
  };
}
