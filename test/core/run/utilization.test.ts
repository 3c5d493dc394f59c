/** The run's utilization series and its under-used finding: edges of the threshold, the span and the memory. */
import { describe, expect, it } from 'vitest';
import { downsampleMean, summariseUtilization, underUsedFinding } from '../../../src/core/run/index.js';
import { GiB } from '../../../src/core/units.js';

const series = (n: number, gpuPct: number | null, stepMs = 100, treeSmPct: number | null = null) =>
  Array.from({ length: n }, (_, i) => ({ tMs: i * stepMs, gpuPct, treeSmPct }));

describe('under-used GPU during a run', () => {
  it('fires at 25 % over 6 s and gives the free bytes when the peak used little memory', () => {
    const u = summariseUtilization('GPU-x', 0, 8 * GiB, series(61, 25, 100, 20));
    expect(u).toMatchObject({ meanGpuPct: 25, meanTreeSmPct: 20, samples: 61, spanMs: 6000 });
    const f = underUsedFinding(u, 1 * GiB);
    expect(f?.details).toMatchObject({ largerBatchFits: true, usedFraction: 0.125, peakBytes: GiB });
    expect(f?.fix).toContain('the peak left 7.00 GiB free');
  });
  it('with most memory used it fires without the larger-batch advice', () => {
    const f = underUsedFinding(summariseUtilization('GPU-x', 0, 8 * GiB, series(61, 5)), 6 * GiB);
    expect(f?.details.largerBatchFits).toBe(false);
    expect(f?.fix).not.toContain('larger batch');
  });
  it('stays quiet above 25 %, under 5 s of samples, and without utilization figures', () => {
    expect(underUsedFinding(summariseUtilization('GPU-x', 0, 8 * GiB, series(61, 26)), GiB)).toBeNull();
    expect(underUsedFinding(summariseUtilization('GPU-x', 0, 8 * GiB, series(49, 5)), GiB)).toBeNull();
    expect(underUsedFinding(summariseUtilization('GPU-x', 0, 8 * GiB, series(61, null)), GiB)).toBeNull();
  });
  it('downsampling keeps bucket means and at most the asked number of points', () => {
    const raw = [...series(50, 10), ...series(50, 30)].map((p, i) => ({ ...p, tMs: i }));
    const out = downsampleMean(raw, 2);
    expect(out).toEqual([{ tMs: 0, gpuPct: 10, treeSmPct: null }, { tMs: 50, gpuPct: 30, treeSmPct: null }]);
    expect(downsampleMean(series(1000, 7), 300).length).toBeLessThanOrEqual(300);
  });
});
