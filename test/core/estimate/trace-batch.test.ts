import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchMaxBatch } from '../../../src/core/estimate/index.js';

const GiB = 2 ** 30;

describe('largest batch from traced probes', () => {
  it('lands on the exact limit of a linear memory curve in four probes', async () => {
    // 3 GiB fixed + 700 MiB per sample; the budget holds 30 samples exactly.
    const MiB = 2 ** 20;
    const r = await searchMaxBatch(async (b) => 3 * GiB + b * 700 * MiB, 3 * GiB + 30 * 700 * MiB);
    expect(r.maxBatch).toBe(30);
    expect(r.exact).toBe(true);
    expect(r.probes.map((p) => p.batch)).toEqual([1, 2, 30, 31]);
    expect(r.bytesPerSample).toBe(700 * MiB);
  });

  it('says 0 when batch 1 does not fit, after one probe', async () => {
    const r = await searchMaxBatch(async () => 30 * GiB, 24 * GiB);
    expect(r).toEqual({ maxBatch: 0, exact: true, bytesPerSample: null, probes: [{ batch: 1, deviceBytes: 30 * GiB, fits: false }] });
  });

  it('never reports a batch that was not probed to fit, whatever the curve (fuzz)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 4000 }), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 0, max: 300 }), async (base, per, wobble) => {
        // Non-linear: a step every 8 samples, as segment rounding gives.
        const f = (b: number): number => base + per * b + wobble * Math.floor(b / 8);
        const r = await searchMaxBatch(async (b) => f(b), 5000, 6);
        const fitsAt = (b: number): boolean => f(b) <= 5000;
        if (r.maxBatch > 0) expect(fitsAt(r.maxBatch)).toBe(true);
        if (r.exact) expect(fitsAt(r.maxBatch + 1)).toBe(false);
        expect(r.probes.length).toBeLessThanOrEqual(6);
      }),
      { numRuns: 300 },
    );
  });
});
