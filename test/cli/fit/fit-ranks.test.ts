/**
 * `gpumem fit --world-size 2` over a two-rank job (test/python/scripts/fit_ranks.py: mp.spawn-style ranks with the
 * fake torch, each on its own GPU of the fake NVML driver, real processes). The batch is per rank, the GPU with
 * the least headroom decides, an OOM on either rank fails the run, and the effective batch is global.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { companionSetup, gpumem, PY } from '../../supervise/helpers/companion-e2e.js';
import { GiB, MiB } from '../../../src/core/units.js';

const SCRIPT = join(PY, 'scripts', 'fit_ranks.py');
const CONTEXT = 500 * MiB;
const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

interface Report {
  schemaVersion: number;
  worldSize: number;
  batch: number | null;
  targetBytes: number;
  gpus: Array<{ index: number; targetBytes: number; freeBytesAtStart: number }>;
  runs: Array<{ batch: number; ok: boolean; oom: boolean; fits: boolean; peakBytes: number | null; perGpuPeakBytes: Array<number | null> }>;
  accumulation: { effectiveBatch: number; microBatch: number; steps: number; realisedBatch: number } | null;
}

async function fitRanks(extra: string[], fixed: number, per: number, rank0Extra: number, torchTotal: number): Promise<{ report: Report; code: number | null; stderr: string }> {
  const t = companionSetup(cleanups);
  const r = await gpumem(['fit', '--world-size', '2', '--gpus', '0,1', '--source', 'nvml', '--interval-ms', '15', '--steps', '3', '--json', ...extra,
    '--', 'python3', SCRIPT, '{batch}', '{steps}', String(fixed), String(per), String(rank0Extra)],
  { ...t.env, FAKE_TORCH_DEVICES: '2', FAKE_TORCH_TOTAL_BYTES: String(torchTotal) });
  return { report: JSON.parse(r.stdout || 'null') as Report, code: r.code, stderr: r.stderr };
}

describe('gpumem fit --world-size (fake torch, fake NVML, two real ranks)', () => {
  it('rank 0 holds more: the batch per rank is the largest that fits on its GPU, and the global batch is kept', async () => {
    const fixed = 64 * MiB;
    const per = 32 * MiB;
    const rank0Extra = 256 * MiB;
    const { report, code, stderr } = await fitRanks(['--fill', '2', '--effective-batch', '256'], fixed, per, rank0Extra, 80 * GiB);
    expect(code, stderr).toBe(0);
    expect(report.schemaVersion).toBe(2);
    expect(report.worldSize).toBe(2);
    expect(report.gpus.map((g) => g.index)).toEqual([0, 1]);
    // Rank 0's GPU has the least headroom: its fixed part is larger by the evaluation buffer.
    const target0 = report.gpus[0]!.targetBytes;
    const truth = Math.floor((target0 - CONTEXT - fixed - rank0Extra) / per);
    expect(truth).toBeGreaterThan(4);
    expect(report.batch).toBe(truth);
    const verified = report.runs.find((r) => r.batch === truth)!;
    expect(verified).toMatchObject({ ok: true, fits: true });
    expect(verified.perGpuPeakBytes).toEqual([CONTEXT + fixed + rank0Extra + per * truth, CONTEXT + fixed + per * truth]);
    // Rank 1 alone would have fit more; a batch one larger breaks rank 0's target.
    expect(CONTEXT + fixed + per * (truth + 1)).toBeLessThanOrEqual(report.gpus[1]!.targetBytes);
    expect(CONTEXT + fixed + rank0Extra + per * (truth + 1)).toBeGreaterThan(target0);
    // 256 samples per optimizer step over both ranks.
    const acc = report.accumulation!;
    expect(acc.microBatch).toBeLessThanOrEqual(truth);
    expect(acc.microBatch * acc.steps * 2).toBe(acc.realisedBatch);
    expect(acc.realisedBatch).toBeGreaterThanOrEqual(256);
  }, 90_000);

  it('an OOM on one rank fails the run even when the driver shows room: only batches that ran on both ranks are answers', async () => {
    // Each fake GPU has 1 GiB for PyTorch: rank 0 runs out above batch (1024 − 64 − 256) / 32 = 22; rank 1 would not.
    const { report, code, stderr } = await fitRanks([], 64 * MiB, 32 * MiB, 256 * MiB, GiB);
    expect(code, stderr).toBe(0);
    expect(report.runs.some((r) => r.oom)).toBe(true);
    expect(report.runs.filter((r) => r.oom).every((r) => r.batch > 22)).toBe(true);
    expect(report.batch).toBeLessThanOrEqual(22);
    expect(report.batch! / 22).toBeGreaterThanOrEqual(0.95);
    expect(report.runs.find((r) => r.batch === report.batch)).toMatchObject({ ok: true, fits: true });
  }, 120_000);

  it('refuses a GPU list that does not give each rank its own GPU (exit 2, one line)', async () => {
    const t = companionSetup(cleanups);
    const few = await gpumem(['fit', '--world-size', '2', '--gpus', '0', '--source', 'nvml', '--', 'python3', SCRIPT, '{batch}'], t.env);
    expect(few.code).toBe(2);
    expect(few.stderr).toContain('--world-size 2 needs 2 GPUs, one per rank; got 1');
    const twice = await gpumem(['fit', '--world-size', '2', '--gpus', '1,1', '--source', 'nvml', '--', 'python3', SCRIPT, '{batch}'], t.env);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('names a GPU twice');
  }, 30_000);
});
