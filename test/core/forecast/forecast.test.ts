/**
 * The OOM forecast on synthetic loops with known shapes: a flat loop (exactly flat, and with noise) raises
 * nothing; a leak of a known size per step is reported at that rate with the step at which it runs out; a
 * spike every N steps is recognised with its next step and headroom; irregular peaks are not called periodic.
 */
import { describe, expect, it } from 'vitest';
import {
  addStepRecord, createStepHistory, forecastMemory, keptSteps, RECENT_STEPS, THINNED_STEPS, type StepMemoryHistory,
} from '../../../src/core/forecast/index.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A loop: each step leaves `left(step)` and peaks at `peak(step)`; reserved follows the peak. */
function loop(steps: number, left: (s: number) => number, peak: (s: number) => number): StepMemoryHistory {
  const h = createStepHistory(0, 'optimizer');
  for (let step = 1; step <= steps; step++) {
    const p = Math.max(peak(step), left(step));
    addStepRecord(h, { step, leftBytes: left(step), peakAllocatedBytes: p, reservedBytes: p, peakReservedBytes: p });
  }
  return h;
}

/** A deterministic pseudo-random sequence in [0, 1). */
function noise(seed: number): (i: number) => number {
  return (i) => {
    const x = Math.sin(seed * 9301 + i * 49297) * 233280;
    return x - Math.floor(x);
  };
}

describe('growth', () => {
  it('an exactly flat loop: no growth, no spikes, no warning', () => {
    const f = forecastMemory(loop(2000, () => 2 * GiB, () => 5 * GiB), { limitBytes: 6 * GiB });
    expect(f?.growth).toBeNull();
    expect(f?.spikes).toBeNull();
    expect(f?.warnings).toEqual([]);
    expect(f?.usualPeakBytes).toBe(5 * GiB);
  });

  it('a flat loop whose step left-overs and peaks wobble by up to 20 MiB: no growth, no warning', () => {
    const r = noise(7);
    const f = forecastMemory(loop(3000, (s) => 2 * GiB + Math.round(r(s) * 20 * MiB), (s) => 5 * GiB + Math.round(r(s + 1e5) * 20 * MiB)), { limitBytes: 5.1 * GiB });
    expect(f?.growth).toBeNull();
    expect(f?.warnings).toEqual([]);
  });

  it('a leak of 4 MiB a step: the rate exactly, and the step the usual peak reaches the limit', () => {
    const f = forecastMemory(loop(400, (s) => 2 * GiB + s * 4 * MiB, (s) => 5 * GiB + s * 4 * MiB), { limitBytes: 8 * GiB });
    expect(f?.growth?.bytesPerStep).toBeCloseTo(4 * MiB, 3);
    expect(f?.growth?.r2).toBeCloseTo(1, 9);
    // Usual peak at step 400 is 5 GiB + 1600 MiB; 3 GiB − 1600 MiB = 1472 MiB left at 4 MiB a step = 368 steps.
    expect(f?.growth?.stepsLeft).toBe(368);
    expect(f?.growth?.oomAtStep).toBe(768);
    expect(f?.warnings).toEqual(['growth']);
  });

  it('the same leak far from the limit is reported without a warning; a smaller window warns', () => {
    const h = loop(400, (s) => 2 * GiB + s * 4 * MiB, (s) => 5 * GiB + s * 4 * MiB);
    const far = forecastMemory(h, { limitBytes: 80 * GiB });
    expect(far?.growth?.stepsLeft).toBe(Math.ceil((80 * GiB - (5 * GiB + 1600 * MiB)) / (4 * MiB)));
    expect(far?.warnings).toEqual([]);
    expect(forecastMemory(h, { limitBytes: 8 * GiB, withinSteps: 100 })?.warnings).toEqual([]);
  });

  it('a leak under noise is still found, at about its rate', () => {
    const r = noise(3);
    const f = forecastMemory(loop(3000, (s) => 2 * GiB + s * 256 * 1024 + Math.round(r(s) * 8 * MiB), () => 5 * GiB), { limitBytes: null });
    expect(f?.growth?.bytesPerStep).toBeGreaterThan(0.9 * 256 * 1024);
    expect(f?.growth?.bytesPerStep).toBeLessThan(1.1 * 256 * 1024);
    expect(f?.growth?.stepsLeft).toBeNull();
    expect(f?.warnings).toEqual([]);
  });

  it('a leak that began late (step 2000 of 3000) is found, from the later half of the run', () => {
    const f = forecastMemory(loop(3000, (s) => 2 * GiB + Math.max(0, s - 2000) * MiB, () => 5 * GiB), { limitBytes: null });
    expect(f?.growth?.sinceStep).toBeGreaterThan(1400);
    expect(f?.growth?.bytesPerStep).toBeGreaterThan(0.5 * MiB);
  });

  it('one step change (a stage that keeps 1 GiB more from step 500 on) is not a steady leak', () => {
    const f = forecastMemory(loop(1000, (s) => (s < 750 ? 2 * GiB : 3 * GiB), () => 5 * GiB), { limitBytes: 6 * GiB });
    expect(f?.growth).toBeNull();
  });
});

describe('periodic spikes', () => {
  const evalEvery100 = (s: number): number => (s % 100 === 0 ? 7 * GiB : 5 * GiB);

  it('an evaluation every 100 steps: recognised, with the next step and its headroom', () => {
    const f = forecastMemory(loop(450, () => 2 * GiB, evalEvery100), { limitBytes: 8 * GiB });
    expect(f?.spikes).toMatchObject({ everySteps: 100, seen: 4, lastStep: 400, nextStep: 500, peakBytes: 7 * GiB, headroomBytes: GiB });
    expect(f?.warnings).toEqual([]);
    expect(f?.usualPeakBytes).toBe(5 * GiB);
  });

  it('the same loop on a smaller GPU: the next evaluation will not fit', () => {
    const f = forecastMemory(loop(450, () => 2 * GiB, evalEvery100), { limitBytes: 6.5 * GiB });
    expect(f?.spikes?.headroomBytes).toBe(-0.5 * GiB);
    expect(f?.warnings).toEqual(['spike']);
    expect(forecastMemory(loop(450, () => 2 * GiB, evalEvery100), { limitBytes: 6.5 * GiB, checkSpikes: false })?.warnings).toEqual([]);
  });

  it('a spike spanning several steps (an evaluation counted in DataLoader steps) is one event', () => {
    const f = forecastMemory(loop(900, () => 2 * GiB, (s) => (s % 250 < 10 && s > 10 ? 6 * GiB : 5 * GiB)), { limitBytes: 8 * GiB });
    expect(f?.spikes).toMatchObject({ everySteps: 250, seen: 3, lastStep: 750, nextStep: 1000 });
  });

  it('peaks that jump at irregular steps (varying sequence lengths) are not periodic', () => {
    const r = noise(11);
    const f = forecastMemory(loop(2000, () => 2 * GiB, (s) => (r(s) < 0.05 ? 7 * GiB : 5 * GiB)), { limitBytes: 6 * GiB });
    expect(f?.spikes).toBeNull();
    expect(f?.warnings).toEqual([]);
  });

  it('growth is added to the next spike: a spike that fits today will not after the leak', () => {
    const f = forecastMemory(loop(450, (s) => 2 * GiB + s * MiB, (s) => evalEvery100(s) + s * MiB), { limitBytes: 7.45 * GiB });
    expect(f?.spikes?.peakBytes).toBe(7 * GiB + 400 * MiB);
    expect(f?.spikes?.nextPeakBytes).toBe(7 * GiB + 500 * MiB);
    expect(f?.spikes?.failsAtStep).toBe(500);
    expect(f?.warnings).toEqual(['spike']);
  });

  it('a leak that will push a later spike over the limit: the failing spike named, warned only within the window', () => {
    // Spikes peak at 7 GiB + 1 MiB × step; the limit 7.9 GiB is first passed by the spike at step 1000 (7 GiB + 1000 MiB).
    const h = loop(450, (s) => 2 * GiB + s * MiB, (s) => evalEvery100(s) + s * MiB);
    const f = forecastMemory(h, { limitBytes: 7 * GiB + 950 * MiB });
    expect(f?.spikes?.nextStep).toBe(500);
    expect(f?.spikes?.failsAtStep).toBe(1000);
    expect(f?.spikes?.failsAtPeakBytes).toBe(7 * GiB + 1000 * MiB);
    expect(f?.warnings).toContain('spike');
    expect(forecastMemory(h, { limitBytes: 7 * GiB + 950 * MiB, withinSteps: 500 })?.warnings).not.toContain('spike');
  });
});

describe('bounded history', () => {
  it('a million steps keep at most the recent and thinned steps, spanning the run, and every spike event', () => {
    const h = loop(1_000_000, () => 2 * GiB, (s) => (s % 20_000 === 0 ? 7 * GiB : 5 * GiB));
    const kept = keptSteps(h);
    expect(kept.length).toBeLessThanOrEqual(RECENT_STEPS + THINNED_STEPS);
    expect(kept[0]?.step).toBeLessThan(2000);
    expect(h.spikes.length).toBe(50);
    expect(forecastMemory(h, { limitBytes: 8 * GiB })?.spikes).toMatchObject({ everySteps: 20_000, nextStep: 1_020_000 });
  });
});
