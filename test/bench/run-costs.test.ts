/**
 * `npm run bench` measures only with the fake driver's H100 costs: the runner sets GPUMEM_FAKE_NVML_COSTS=h100
 * when it is unset and refuses any other value. Checked with --dry-run, which measures nothing.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useRealCosts } from '../../bench/fake-costs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

function bench(args: string[], costs: string | undefined): { code: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.GPUMEM_FAKE_NVML_COSTS;
  if (costs !== undefined) env.GPUMEM_FAKE_NVML_COSTS = costs;
  const r = spawnSync(TSX, ['bench/run.ts', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the benchmark runner and the fake driver\'s costs', () => {
  it('sets the H100 table when none is given and says so', () => {
    const r = bench(['--dry-run', 'status'], undefined);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('fake NVML costs: GPUMEM_FAKE_NVML_COSTS=h100');
    expect(r.stdout).toMatch(/^would run: status$/m);
  });

  it('refuses to measure free calls or an unknown table', () => {
    for (const costs of ['off', 'h200']) {
      const r = bench(['--dry-run'], costs);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`bench: refusing to run: GPUMEM_FAKE_NVML_COSTS=${costs}: the benchmarks measure only with the H100's per-call costs (h100); unset it or set it to h100\n`);
      expect(r.stdout).not.toContain('would run');
    }
  });

  it('each benchmark on the fake checks for itself (a run not started by the runner)', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(useRealCosts(env)).toBeNull();
    expect(env.GPUMEM_FAKE_NVML_COSTS).toBe('h100');
    expect(useRealCosts({ GPUMEM_FAKE_NVML_COSTS: 'off' })).toMatch(/^GPUMEM_FAKE_NVML_COSTS=off: /);
  });
});
