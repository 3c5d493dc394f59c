/**
 * `gpumem run --batch auto`: the step of test/python/scripts/auto_batch.py is traced with real torch on fake
 * tensors against the free memory of the fake NVML driver's GPU, the largest batch that fits is the run's batch
 * (the same answer `gpumem estimate --gpu SIZE` gives for that budget), --effective-batch is kept through {accum},
 * and the run's real peak (the script's claim on the GPU double) is set beside the prediction. A script that cannot
 * be traced is measured with short runs when its command has {steps}, and refused with the reason when not.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem, PY } from '../helpers/companion-e2e.js';
import { startPump } from '../helpers/pump.js';
import { fakeH100 } from '../../fake-nvml/scenario.js';
import { tempDir } from '../helpers/claims.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { GiB, MiB } from '../../../src/core/units.js';

const SCRIPT = join(PY, 'scripts', 'auto_batch.py');
const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

/** A world whose GPU 0 has `freeBytes` free: the rest is held by nothing the run owns. */
function world(freeBytes: number): Record<string, string> {
  const tmp = tempDir('gpumem-auto-batch-');
  const pump = startPump(tmp.dir, 1);
  const memory = fakeH100(0).memory!;
  pump.leakBytes[0] = memory.totalBytes! - (memory.reservedBytes ?? 0) - freeBytes;
  cleanups.push(() => pump.stop(), tmp.remove);
  return { PATH: process.env.PATH ?? '', HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'data'), XDG_RUNTIME_DIR: join(tmp.dir, 'runtime'), PYTHONDONTWRITEBYTECODE: '1', ...pump.env };
}

interface Auto { method: string; batch: number; accum: number; maxBatch: number; exact: boolean; budgetBytes: number; predictedBytes: number | null; measuredPeakBytes: number | null; reasons: string[]; effectiveBatch: number | null }

describe('gpumem run --batch auto', () => {
  it('runs the largest traced batch that fits, keeps the effective batch, and sets the real peak beside the prediction', async () => {
    const python = requireTestPython();
    const env = world(2 * GiB);
    const r = await gpumem(['run', '--gpus', '0', '--batch', 'auto', '--effective-batch', '400', '--json', '--no-history', '--no-companion', '--interval-ms', '20',
      '--', python, SCRIPT, '{batch}', '{accum}'], env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { autoBatch: Auto; attempts: Array<{ batch: { batch: number; accum: number } }> };
    const a = report.autoBatch;
    expect(a.method).toBe('trace');
    // The same search as `gpumem estimate --gpu auto` on the same GPU (free memory less the 8 % margin).
    const est = await gpumem(['estimate', '--json', '--gpu', 'auto', '--', python, SCRIPT, '{batch}', '1'], env);
    expect(est.code, est.stderr).toBe(0);
    const search = (JSON.parse(est.stdout) as { batchSearch: { maxBatch: number; exact: boolean } }).batchSearch;
    expect([a.maxBatch, a.exact]).toEqual([search.maxBatch, search.exact]);
    expect(a.budgetBytes).toBe(Math.floor(2 * GiB * 0.92));
    expect(a.maxBatch).toBeGreaterThan(8);
    // 400 is more than fits at once: kept exactly by accumulation, the micro-batch at most the max, the plan traced
    // (with the gradients alive through the next forward) within the budget.
    expect(a.accum).toBeGreaterThan(1);
    expect(a.batch * a.accum).toBe(400);
    expect(a.batch).toBeLessThanOrEqual(a.maxBatch);
    expect(a.predictedBytes).toBeLessThanOrEqual(a.budgetBytes);
    expect(report.attempts[0]?.batch).toEqual({ batch: a.batch, accum: a.accum });
    expect(r.stderr).toContain(`ran batch ${a.batch} accum ${a.accum}`);
    expect(r.stderr).toMatch(new RegExp(`gpumem: batch auto: chosen: batch ${a.batch}${a.accum > 1 ? `, accumulation ${a.accum}` : ''}\\n`));
    // The run's peak is the script's own claim on the GPU double.
    expect(a.measuredPeakBytes).toBe(900 * MiB + a.batch * 4 * MiB);
    expect(r.stderr).toMatch(/gpumem: batch auto: predicted .* the run peaked at .* of the .* budget/);
  }, 300_000);

  it('measures short runs when the step cannot be traced and the command has {steps}; says why when it has not', async () => {
    const env = world(2 * GiB);
    const dir = env.HOME!;
    // Never imports torch: the tracer has no step to trace. Holds 500 MiB + 40 MiB per sample on the GPU double.
    const script = join(dir, 'no_torch.py');
    writeFileSync(script, [
      'import os, sys, time',
      'batch, steps = int(sys.argv[1]), int(sys.argv[2])',
      'path = os.path.join(os.environ["GPUMEM_TEST_CLAIMS"], "%d-0" % os.getpid())',
      'open(path, "w").write(str((500 + 40 * batch) << 20))',
      'time.sleep(0.3)',
      'print("ran batch", batch, "steps", steps, flush=True)',
    ].join('\n'));
    const measured = await gpumem(['run', '--gpus', '0', '--batch', 'auto', '--steps', '7', '--json', '--no-history', '--no-companion', '--interval-ms', '20', '--', 'python3', script, '{batch}', '{steps}'], env);
    expect(measured.code, measured.stderr).toBe(0);
    const a = (JSON.parse(measured.stdout) as { autoBatch: Auto }).autoBatch;
    expect(a.method, measured.stderr).toBe('measured');
    expect(measured.stderr).toMatch(/batch auto: the step could not be traced \(.*\); measuring short runs/);
    // The tracer's own reason, as it said it, not the estimate's sentence around it.
    expect(measured.stderr).toContain('the step could not be traced (the program ended without importing torch); measuring');
    // fit's planner chose it from runs it made: above both probes, within the budget, and the run held what it claimed.
    expect(a.batch, measured.stderr).toBeGreaterThan(4);
    expect(a.batch).toBeLessThanOrEqual(Math.floor((a.budgetBytes - 500 * MiB) / (40 * MiB)));
    expect(measured.stderr).toContain(`gpumem: batch auto: measuring batch ${a.batch} for 5 steps`);
    expect(a.measuredPeakBytes).toBe((500 + 40 * a.batch) * MiB);
    expect(measured.stderr).toContain(`ran batch ${a.batch} steps 7`);
    const refused = await gpumem(['run', '--gpus', '0', '--batch', 'auto', '--no-history', '--no-companion', '--', 'python3', script, '{batch}', '5'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^gpumem: error: --batch auto: the training step could not be traced: .*\nhint: add \{steps\} to the command/m);
    expect(refused.stderr).toContain('could not be traced: the program ended without importing torch\n');
  }, 300_000);

  it('refuses what cannot work before anything runs', async () => {
    const t = companionSetup(cleanups);
    const noBatch = await gpumem(['run', '--batch', 'auto', '--', 'python3', '-c', 'pass'], t.env);
    expect([noBatch.code, noBatch.stderr]).toEqual([2, 'gpumem: error: --batch auto needs {batch} in the command, where the chosen batch goes\nhint: gpumem run --batch auto -- python train.py --batch-size {batch}\n']);
    const noAccum = await gpumem(['run', '--batch', 'auto', '--effective-batch', '64', '--', 'python3', 'x.py', '{batch}'], t.env);
    expect(noAccum.code).toBe(2);
    expect(noAccum.stderr).toMatch(/^gpumem: error: --effective-batch needs \{accum\} in the command/);
    const noSteps = await gpumem(['run', '--batch', '4', '--', 'python3', 'x.py', '{batch}', '{steps}'], t.env);
    expect(noSteps.code).toBe(2);
    expect(noSteps.stderr).toMatch(/^gpumem: error: the command has \{steps\}: give --steps N for the run/);
    const bad = await gpumem(['run', '--batch', 'lots', '--', 'python3', 'x.py', '{batch}'], t.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^gpumem: error: --batch: "lots" is neither a batch size nor auto/);
  });
});
