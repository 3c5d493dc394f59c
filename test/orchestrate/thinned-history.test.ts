/** A live view's history: the newest samples at full rate, older ones about one a second, peaks kept. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Device, Sample } from '../../src/core/types.js';
import { ThinnedHistory, thinnedToPeriod } from '../../src/orchestrate/index.js';

const sampleAt = (timeMs: number, usedBytes = 1): Sample =>
  ({ timeMs, source: { kind: 'nvml', detail: 'x' }, devices: [{ memory: { usedBytes } } as Device], processes: [], unavailable: {} }) as Sample;
const times = (samples: readonly Sample[]): number[] => samples.map((s) => s.timeMs);

describe('ThinnedHistory', () => {
  it('holds ten minutes at 10 Hz in about 730 samples: 128 at full rate, then one a second', () => {
    const history = new ThinnedHistory({ recent: 128, everyMs: 1000, spanMs: 600_000, intervalMs: 100 });
    // Twenty minutes at 10 Hz: the first ten must be gone, the last ten kept.
    for (let t = 0; t < 1_200_000; t += 100) history.push(sampleAt(t));
    const kept = history.toArray();
    expect(kept.length).toBe(128 + 588);
    expect(history.size).toBe(kept.length);
    const recent = times(kept.slice(-128));
    expect(recent[0]).toBe(1_200_000 - 12_800);
    expect(recent.every((t, i) => i === 0 || t - (recent[i - 1] as number) === 100)).toBe(true);
    const older = times(kept.slice(0, -128));
    expect(older.every((t, i) => i === 0 || t - (older[i - 1] as number) === 900)).toBe(true);
    // The whole history spans ten minutes, give or take the slots' spacing.
    expect((kept.at(-1) as Sample).timeMs - (kept[0] as Sample).timeMs).toBeGreaterThan(530_000);
    expect((kept.at(-1) as Sample).timeMs - (kept[0] as Sample).timeMs).toBeLessThanOrEqual(600_000);
    expect(history.latest()?.timeMs).toBe(1_199_900);
    expect(times(history.toArray(3))).toEqual([1_199_700, 1_199_800, 1_199_900]);
  });

  it('keeps every sample of a 1 Hz view, timer jitter included', () => {
    const history = new ThinnedHistory({ recent: 128, everyMs: 1000, spanMs: 600_000, intervalMs: 1000 });
    const pushed: number[] = [];
    for (let k = 0; k < 400; k++) {
      const t = k * 1000 + (k % 3 === 0 ? 5 : k % 3 === 1 ? -5 : 0);
      pushed.push(t);
      history.push(sampleAt(t));
    }
    expect(times(history.toArray())).toEqual(pushed);
  });

  it('keeps the sample of a slot that held the most memory, so a short peak survives thinning', () => {
    const history = new ThinnedHistory({ recent: 2, everyMs: 1000, spanMs: 600_000, intervalMs: 100 });
    const used = [5, 5, 9, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5];
    used.forEach((u, k) => history.push(sampleAt(k * 100, u)));
    const older = history.toArray().slice(0, -2);
    expect(older.map((s) => s.devices[0]?.memory.usedBytes)).toContain(9);
    expect(Math.max(...older.map((s) => s.devices[0]?.memory.usedBytes ?? 0))).toBe(9);
  });

  it('starts again after clear, and time going backwards opens a new slot', () => {
    const history = new ThinnedHistory({ recent: 1, everyMs: 1000, spanMs: 600_000, intervalMs: 100 });
    for (const t of [0, 100, 5000, 200]) history.push(sampleAt(t));
    expect(times(history.toArray())).toEqual([0, 5000, 200]);
    history.clear();
    expect(history.toArray()).toEqual([]);
    expect(history.latest()).toBeUndefined();
  });

  it('refuses sizes that are not positive', () => {
    expect(() => new ThinnedHistory({ recent: 0, everyMs: 1000, spanMs: 600_000, intervalMs: 100 })).toThrow(RangeError);
  });
});

describe('thinnedToPeriod', () => {
  it('keeps one sample per slot, the one with the most memory, and the result is what a ThinnedHistory would keep (property)', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 9 })), { maxLength: 60 }), (steps) => {
      let t = 0;
      const samples = steps.map(([gap, used]) => sampleAt((t += gap), used));
      const thinned = thinnedToPeriod(samples, 1000);
      // A history with one recent slot keeps the same samples once everything has passed through it.
      const history = new ThinnedHistory({ recent: 1, everyMs: 1000, spanMs: 1e9, intervalMs: 1 });
      for (const s of samples) history.push(s);
      history.push(sampleAt(t + 1e6));
      expect(history.toArray().slice(0, -1)).toEqual(thinned);
      for (let i = 1; i < thinned.length; i++) expect(thinned[i]!.timeMs).toBeGreaterThanOrEqual(thinned[i - 1]!.timeMs);
      const maxUsed = Math.max(0, ...samples.map((s) => s.devices[0]!.memory.usedBytes ?? 0));
      if (samples.length > 0) expect(Math.max(...thinned.map((s) => s.devices[0]!.memory.usedBytes ?? 0))).toBe(maxUsed);
    }));
  });
});
