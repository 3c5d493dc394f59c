/**
 * GPU activity during `gpumem run`, with real processes and the fake NVML driver: the device utilization and
 * the run's per-process SM % are kept as a series in the run record, and a GPU that stays at or below 25 %
 * over the run is reported as under-used with its numbers and a fix — and not when it is busy.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { PROCS, tempDir } from './helpers/claims.js';
import { startPump, type PumpActivity } from './helpers/pump.js';
import { MiB } from '../../src/core/units.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

// Holds 600 MiB on GPU 0 for 6 s: longer than the 5 s an under-used finding needs.
const HOLD = `import(${JSON.stringify(join(PROCS, 'claim.mjs'))}).then((m) => { m.claim(0, ${600 * MiB}); setTimeout(() => {}, 6000); })`;

interface Util { index: number; meanGpuPct: number; meanTreeSmPct: number | null; samples: number; series: Array<{ tMs: number; gpuPct: number; treeSmPct: number | null }> }
interface Report { attempts: Array<{ utilization: Util[]; findings: Array<{ id: string; gpuIndex: number; title: string; fix: string; details: Record<string, unknown> }> }> }

// Spawned asynchronously: the pump writes the scenario from this process's event loop while gpumem runs.
function run(activity: PumpActivity, json: boolean): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tmp = tempDir('gpumem-under-used-');
  const pump = startPump(tmp.dir, 1, 15, activity);
  cleanups.push(() => pump.stop(), tmp.remove);
  const env = { PATH: process.env.PATH ?? '', HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'data'), XDG_RUNTIME_DIR: join(tmp.dir, 'runtime'), ...pump.env };
  const child = spawn(process.execPath, [BIN, 'run', '--gpus', '0', '--no-history', '--no-companion', '--source', 'nvml', '--interval-ms', '100',
    ...(json ? ['--json'] : []), '--', process.execPath, '-e', HOLD], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

describe('GPU activity under gpumem run (fake NVML, real processes)', () => {
  it('a GPU at 12 % with 600 MiB of 80 GiB: series kept, under-used finding with the free bytes for a larger batch', async () => {
    const r = await run({ gpuPct: 12, smUtilPct: 10 }, true);
    expect(r.code, r.stderr).toBe(0);
    const attempt = (JSON.parse(r.stdout) as Report).attempts[0];
    const u = attempt?.utilization[0] as Util;
    expect(u, r.stderr).toBeDefined();
    expect(u.index).toBe(0);
    expect(u.samples).toBeGreaterThanOrEqual(40);
    expect(u.meanGpuPct).toBe(12);
    expect(u.meanTreeSmPct).toBe(10);
    expect(u.series.every((p) => p.gpuPct === 12)).toBe(true);
    expect(attempt?.findings).toHaveLength(1);
    const f = attempt?.findings[0];
    expect(f?.id).toBe('under-used-gpu');
    expect(f?.details).toMatchObject({ meanGpuPct: 12, meanTreeSmPct: 10, peakBytes: 600 * MiB, largerBatchFits: true });
    expect(f?.title).toMatch(/^GPU 0 under-used: 12% mean utilization \(the run's own SM 10%\) over [56]\.\ds, peak 600\.00 MiB \(1% of 79\.65 GiB\)$/);
    expect(f?.fix).toContain('num_workers');
    expect(f?.fix).toContain('a larger batch fits');
  }, 40_000);

  it('a busy GPU gets no finding, and the human report prints the mean', async () => {
    const r = await run({ gpuPct: 90, smUtilPct: 88 }, false);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/GPU 0 utilization: mean 90%, the run's SM 88% over \d+ samples/);
    expect(r.stderr).not.toContain('under-used');
  }, 40_000);
});
