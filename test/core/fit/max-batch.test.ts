import { describe, expect, it } from 'vitest';
import { DEFAULT_FIT_OPTIONS, planFit, type Measure } from '../../../src/core/fit/index.js';
import { GiB } from '../../../src/core/units.js';

/** 1 GiB + 1 GiB per sample, no OOM: every batch runs; the calls are recorded. */
function linear(): { measure: Measure; calls: number[] } {
  const calls: number[] = [];
  return { calls, measure: async (b) => (calls.push(b), { ok: true, oom: false, peakBytes: GiB + b * GiB }) };
}

describe('fit planner: --max-batch bounds every run, the probes included', () => {
  for (const maxBatch of [1, 2, 3, 5, 100]) {
    it(`--max-batch ${maxBatch}: no run above it`, async () => {
      const { measure, calls } = linear();
      const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: 1000 * GiB, maxBatch });
      expect(Math.max(...calls)).toBeLessThanOrEqual(maxBatch);
      expect(r.batch).toBe(maxBatch);
    });
  }

  it('--max-batch 1 where batch 1 does not fit: one run, no batch', async () => {
    const { measure, calls } = linear();
    const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: GiB, maxBatch: 1 });
    expect(calls).toEqual([1]);
    expect(r.batch).toBeNull();
  });
});
