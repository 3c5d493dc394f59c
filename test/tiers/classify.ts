/**
 * Sorts the test files into the suite's tiers by what each one reaches: the modules it imports, followed
 * through our sources and the tests' helpers. A new test file lands in its tier without a list to edit.
 * - unit: pure and in-process: plain data, fixture files, SQLite in a temporary folder. Seconds.
 * - e2e: real processes (anything that reaches child_process), the built CLI, the fake NVML driver (koffi).
 * - torch: real PyTorch, through the project's Python environment (test/setup/python-venv.ts).
 * - browser: a real Chromium or Firefox.
 * A file that reaches more than one takes the slowest: torch, then browser, then e2e.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { importsIn } from '../helpers/imports.js';

export const TIERS = ['unit', 'e2e', 'torch', 'browser'] as const;
export type Tier = (typeof TIERS)[number];

/** What puts a file above the unit tier: a module it reaches (ours by path from the root, or a package name). */
const REACHES: ReadonlyArray<[Tier, (module: string) => boolean]> = [
  ['torch', (m) => m === 'test/setup/python-venv.ts'],
  ['browser', (m) => m === 'test/setup/chromium.ts' || m === 'playwright-core' || m.startsWith('test/server/firefox-')],
  ['e2e', (m) => ['node:child_process', 'child_process', 'koffi', 'node:worker_threads', 'test/helpers/cli.ts', 'test/fake-nvml/build.ts'].includes(m)],
];

/** The project's file an import names (".js" written for a ".ts" source), or null for a package. */
function resolveOurs(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Every module `file` reaches: our files (paths relative to `root`) and the packages they import. */
function reachedFrom(root: string, file: string, memo: Map<string, Set<string>>): Set<string> {
  const reached = new Set<string>();
  const stack = [file];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const next = stack.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    reached.add(relative(root, next));
    const known = memo.get(next);
    if (known) {
      for (const m of known) reached.add(m);
      continue;
    }
    // A setup step (test/setup/) is built by the global setup before any test runs: a test that imports one
    // uses what it built, and does not run it.
    if (!/\.[cm]?[jt]s$/.test(next) || (next !== file && relative(root, next).startsWith('test/setup/'))) continue;
    for (const spec of importsIn(readFileSync(next, 'utf8'))) {
      const ours = resolveOurs(next, spec);
      if (ours) stack.push(ours);
      else if (!spec.startsWith('.')) reached.add(spec);
    }
  }
  memo.set(file, reached);
  return reached;
}

/** The tier of one test file. */
export function tierOf(root: string, file: string, memo = new Map<string, Set<string>>()): Tier {
  const reached = reachedFrom(root, file, memo);
  for (const [tier, marks] of REACHES) if ([...reached].some(marks)) return tier;
  return 'unit';
}

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : testFiles(p);
    return p.endsWith('.test.ts') ? [p] : [];
  });
}

/** Every test file under `root`/test by tier, as paths relative to `root`. */
export function classifyTests(root: string): Record<Tier, string[]> {
  const out: Record<Tier, string[]> = { unit: [], e2e: [], torch: [], browser: [] };
  const memo = new Map<string, Set<string>>();
  for (const file of testFiles(join(root, 'test')).sort()) out[tierOf(root, file, memo)].push(relative(root, file));
  return out;
}
