/**
 * A process's utilisation over a window (measureUtil), summed as the points come, against the definition
 * written out plainly (every point listed, then mean, maximum and the trailing idle run) on random windows:
 * per-process SM % with gaps, a pid listed twice, GPUs whose utilisation is unknown, zero or busy.
 */
import { describe, expect, it } from 'vitest';
import { measureUtil } from '../../../src/core/diagnose/index.js';
import type { GpuProcess, Sample } from '../../../src/core/index.js';
import { seeded } from '../../helpers/fuzz.js';
import { device, GiB, proc, sample } from './build.js';

/** The definition: the row's own SM % where any sample has it, else the GPU's when it was 0 % in every sample. */
function plainly(row: GpuProcess, gpuIndex: number | null, samples: readonly Sample[]) {
  const own: Array<[number, number]> = [];
  const gpu: Array<[number, number]> = [];
  for (const s of samples) {
    const match = s.processes.find((p) => p.pid === row.pid && p.gpuUuid === row.gpuUuid);
    if (match?.smUtilPct !== null && match?.smUtilPct !== undefined) own.push([s.timeMs, match.smUtilPct]);
    const pct = s.devices.find((d) => d.index === gpuIndex)?.utilization.gpuPct;
    if (pct !== null && pct !== undefined) gpu.push([s.timeMs, pct]);
  }
  const summary = (points: Array<[number, number]>, basis: 'process' | 'device') => {
    let idleFrom = -1;
    for (let i = points.length - 1; i >= 0 && points[i]![1] === 0; i--) idleFrom = i;
    return {
      meanPct: points.reduce((sum, [, pct]) => sum + pct, 0) / points.length,
      maxPct: Math.max(...points.map(([, pct]) => pct)),
      samples: points.length,
      idleMs: idleFrom < 0 ? 0 : points[points.length - 1]![0] - points[idleFrom]![0],
      idleWholeWindow: idleFrom === 0,
      basis,
    };
  };
  if (own.length > 0) return summary(own, 'process');
  return gpu.length > 0 && gpu.every(([, pct]) => pct === 0) ? summary(gpu, 'device') : null;
}

describe('utilisation over a window', () => {
  it('equals the plain definition on 300 random windows', () => {
    const rnd = seeded(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    let byBasis = { process: 0, device: 0, none: 0 };
    for (let w = 0; w < 300; w++) {
      const length = 1 + Math.floor(rnd() * 12);
      const samples = Array.from({ length }, (_, i) => {
        const pct = () => pick([null, 0, 0, 0, Math.floor(rnd() * 100)]);
        // The same pid twice on one GPU (NVML lists compute and graphics rows apart): the first row is the one.
        const processes = [proc(10, 0, GiB, { smUtilPct: pct() }), proc(10, 0, GiB, { smUtilPct: pct() }), proc(11, 1, GiB, { smUtilPct: rnd() < 0.7 ? null : pct() })];
        if (rnd() < 0.2) processes.splice(0, 1);
        return sample(1_000_000 + i * 700, [device(0, GiB, { utilPct: pct() }), device(1, GiB, { utilPct: rnd() < 0.6 ? 0 : pct() })], processes);
      });
      const last = samples[samples.length - 1]!;
      for (const row of last.processes) {
        const got = measureUtil(row, row.gpuIndex, samples);
        expect(got).toEqual(plainly(row, row.gpuIndex, samples));
        byBasis = { ...byBasis, [got?.basis ?? 'none']: byBasis[got?.basis ?? 'none'] + 1 };
      }
    }
    // Every branch was taken many times.
    expect(Math.min(byBasis.process, byBasis.device, byBasis.none)).toBeGreaterThan(20);
  });
});
