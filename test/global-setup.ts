/**
 * Runs once per tier (vitest project) before its tests. The unit tier needs only the snapshot fixtures. Every
 * other tier needs what the whole suite always needed: the native test doubles (the fake libnvidia-ml.so.1),
 * the snapshot fixtures, dist/ (for the end-to-end tests) and the Python environments, and Chromium and
 * Firefox (browser tests) and Prometheus (/metrics tests) installed from Debian's packages when it can, so
 * that a fresh clone needs nothing but `npm ci`. Each builder registers itself in test/setup/. When `npm test`
 * runs several tiers, the full setup runs once and its result is shared.
 */
import type { TestProject } from 'vitest/node';
import { buildAll } from './setup/index.js';
import { ensureChromium, ensureFirefox, ensurePrometheus, skipBanner } from './setup/chromium.js';
import { buildSnapshotFixtures } from './setup/snapshot-fixtures.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the browser test cannot run; empty when Chromium is there. */
    chromiumMissing: string;
  }
}

/** The full setup of this vitest process, started by the first tier that needs it (projects load this file each). */
const shared = globalThis as { gpumemFullSetup?: Promise<string> };

async function fullSetup(): Promise<string> {
  await buildAll();
  const noPrometheus = ensurePrometheus();
  if (noPrometheus) process.stderr.write(`test setup: ${noPrometheus}; the /metrics tests will fail\n`);
  const noFirefox = ensureFirefox();
  if (noFirefox) process.stderr.write(`test setup: ${noFirefox}; the page's Firefox test will fail\n`);
  const missing = ensureChromium() ?? '';
  if (missing) process.stderr.write(skipBanner(missing));
  return missing;
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (project.name === 'unit') {
    await buildSnapshotFixtures();
    return () => undefined;
  }
  const first = shared.gpumemFullSetup === undefined;
  shared.gpumemFullSetup ??= fullSetup();
  const missing = await shared.gpumemFullSetup;
  project.provide('chromiumMissing', missing);
  return () => {
    if (missing && first) process.stderr.write(skipBanner(missing));
  };
}
