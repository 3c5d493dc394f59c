import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchMaxBatch, searchMaxSeq } from '../../../src/core/estimate/index.js';

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

describe('longest sequence from traced probes', () => {
  const MiB = 2 ** 20;
  it('lands on the limit of a quadratic curve (eager attention scores) in multiples of 64, in six probes', async () => {
    // 2 GiB fixed + 1 MiB per token + s² × 64 B (a batch of score matrices); the limit is found by direct search.
    const f = (s: number): number => 2 * GiB + s * MiB + s * s * 64;
    const budget = 6 * GiB;
    let truth = 0;
    for (let s = 64; f(s) <= budget; s += 64) truth = s;
    const r = await searchMaxSeq(async (s) => f(s), budget, 7);
    expect(r.multiple).toBe(64);
    expect(r.maxSeq).toBe(truth);
    expect(r.exact).toBe(true);
    // 64, 128, the line's overshoot, the line again (short: the curve bends up), then the parabola through
    // three probes lands on the limit, and the next multiple proves it: 6 probes.
    expect(r.probes.length).toBeLessThanOrEqual(6);
    expect(r.probes.every((p) => p.seq % 64 === 0 && p.fits === f(p.seq) <= budget)).toBe(true);
  });

  it('reports bytes per token from the two longest fitting probes, and 0 when 64 tokens do not fit', async () => {
    const linear = await searchMaxSeq(async (s) => GiB + s * 3 * MiB, GiB + 640 * 3 * MiB, 7);
    expect(linear.maxSeq).toBe(640);
    expect(linear.bytesPerToken).toBe(3 * MiB);
    const none = await searchMaxSeq(async () => 9 * GiB, 8 * GiB);
    expect(none).toEqual({ maxSeq: 0, exact: true, multiple: 64, bytesPerToken: null, probes: [{ seq: 64, deviceBytes: 9 * GiB, fits: false }] });
  });
});
