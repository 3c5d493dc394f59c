import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FIT_OPTIONS, fitLine, planFit, type Measure } from '../../../src/core/fit/index.js';
import { CURVES, accelerateShrink, lightningBinsearch, lightningPower, survives, trueMax, type Curve } from '../../../bench/fit-peers.js';
import { runs } from '../../helpers/fuzz.js';
import { GiB, MiB } from '../../../src/core/units.js';

function simulate(curve: Curve): { measure: Measure; calls: number[] } {
  const calls: number[] = [];
  const measure: Measure = async (b) => {
    calls.push(b);
    const ok = survives(curve, b);
    return { ok, oom: !ok, peakBytes: ok ? curve.peakBytes(b) : null };
  };
  return { measure, calls };
}

const target = (c: Curve): number => Math.floor(0.9 * c.capacityBytes);

describe('fit planner on simulated memory curves', () => {
  for (const curve of CURVES) {
    it(`${curve.name}: reports only a batch it ran, within target, ≥ 97 % of the true max`, async () => {
      const { measure, calls } = simulate(curve);
      const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: target(curve) });
      const truth = trueMax((b) => survives(curve, b) && curve.peakBytes(b) <= target(curve));
      expect(r.batch).not.toBeNull();
      expect(calls).toContain(r.batch);
      const run = r.runs.find((x) => x.batch === r.batch)!;
      expect(run.ok && run.peakBytes! <= target(curve)).toBe(true);
      expect(r.batch!).toBeLessThanOrEqual(truth);
      expect(r.batch! / truth).toBeGreaterThanOrEqual(0.97);
      expect(r.runs.length).toBeLessThanOrEqual(DEFAULT_FIT_OPTIONS.maxRuns);
    });
  }

  it('uses 3 runs on a linear curve, with the line recovering the per-sample bytes exactly', async () => {
    const curve = CURVES[0]!;
    const { measure } = simulate(curve);
    const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: target(curve) });
    expect(r.runs.map((x) => x.reason)).toEqual(['probe', 'probe', 'verify']);
    expect(r.line!.perSampleBytes).toBe(260 * 1024 ** 2);
    expect(Math.abs(r.predictionErrorPct!)).toBeLessThan(0.01);
  });

  it('needs fewer runs than Lightning binsearch and accelerate on every curve', async () => {
    for (const curve of CURVES) {
      const { measure } = simulate(curve);
      const ours = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: target(curve) });
      const fits = (b: number) => survives(curve, b);
      expect(ours.runs.length).toBeLessThan(lightningBinsearch(fits).trials);
      expect(ours.runs.length).toBeLessThanOrEqual(Math.max(accelerateShrink(fits, 1024).trials, lightningPower(fits).trials));
    }
  });

  it('reports null when not even batch 1 fits, after backing off', async () => {
    const curve: Curve = { name: 'huge', peakBytes: () => 100 * GiB, capacityBytes: 80 * GiB };
    const { measure, calls } = simulate(curve);
    const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: target(curve) });
    expect(r.batch).toBeNull();
    expect(calls).toEqual([2, 1]);
  });

  it('refuses to guess when a run fails without OOM or reports no memory', async () => {
    await expect(planFit(async () => ({ ok: false, oom: false, peakBytes: null }), { ...DEFAULT_FIT_OPTIONS, targetBytes: GiB })).rejects.toThrow(/without running out of memory/);
    await expect(planFit(async () => ({ ok: true, oom: false, peakBytes: null }), { ...DEFAULT_FIT_OPTIONS, targetBytes: GiB })).rejects.toThrow(/no GPU memory reading/);
  });

  it('never reports a batch that did not fit, for any monotone curve (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 8 * 1024 }), // fixed MiB
        fc.integer({ min: 1, max: 2048 }), // per-sample MiB
        fc.integer({ min: 0, max: 512 }), // step position
        fc.integer({ min: 0, max: 4096 }), // step MiB
        async (fixed, per, stepAt, step) => {
          const curve: Curve = { name: 'p', peakBytes: (b) => (fixed + per * b + (b > stepAt ? step : 0)) * MiB, capacityBytes: 40 * GiB };
          const { measure } = simulate(curve);
          const r = await planFit(measure, { ...DEFAULT_FIT_OPTIONS, targetBytes: target(curve) });
          if (r.batch !== null) {
            expect(survives(curve, r.batch)).toBe(true);
            expect(curve.peakBytes(r.batch)).toBeLessThanOrEqual(target(curve));
          } else {
            expect(curve.peakBytes(1) > target(curve) || !survives(curve, 1)).toBe(true);
          }
        },
      ),
      { numRuns: runs(200) },
    );
  });

  it('least-squares line through exact points', () => {
    expect(fitLine([{ batch: 2, peakBytes: 300 }, { batch: 4, peakBytes: 500 }, { batch: 8, peakBytes: 900 }])).toEqual({ fixedBytes: 100, perSampleBytes: 100 });
    expect(fitLine([{ batch: 2, peakBytes: 300 }])).toBeNull();
  });
});

describe('peer strategies restated from the reference', () => {
  it('reproduce the published trial counts for a true max of 300 and 100', () => {
    expect(lightningPower((b) => b <= 300)).toEqual({ batch: 256, trials: 9 });
    expect(lightningBinsearch((b) => b <= 300)).toEqual({ batch: 300, trials: 17 });
    expect(accelerateShrink((b) => b <= 100)).toEqual({ batch: 92, trials: 4 });
    expect(accelerateShrink((b) => b <= 100, 1024)).toEqual({ batch: 97, trials: 23 });
  });
});
