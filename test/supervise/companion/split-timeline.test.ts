/** The PyTorch split over an attempt stays bounded however long it runs, and keeps every peak. */
import { describe, expect, it } from 'vitest';
import type { GpuSplit } from '../../../src/core/companion/split.js';
import { SplitTimeline } from '../../../src/supervise/companion/split-timeline.js';

const gpu = (uuid: string, allocatedBytes: number | null, reservedBytes: number | null): GpuSplit => ({
  gpuUuid: uuid, pids: [1], processUsedBytes: null, allocatedBytes, reservedBytes, nonPytorchBytes: null, numAllocRetries: null,
});

describe('SplitTimeline', () => {
  it('keeps a few ticks as they are, leaving out GPUs without PyTorch numbers', () => {
    const t = new SplitTimeline();
    t.note(0, [gpu('GPU-a', 10, 20), gpu('GPU-b', null, null)]);
    t.note(100, [gpu('GPU-a', 11, null)]);
    t.note(200, [gpu('GPU-b', null, null)]);
    expect(t.list()).toEqual([
      { tMs: 0, allocatedBytes: { 'GPU-a': 10 }, reservedBytes: { 'GPU-a': 20 } },
      { tMs: 100, allocatedBytes: { 'GPU-a': 11 }, reservedBytes: {} },
    ]);
  });

  it('reduces a day at 10 Hz to 300 points whose maxima are the true maxima, spikes included', () => {
    const t = new SplitTimeline();
    const ticks = 864_000;
    let maxAllocated = 0;
    for (let i = 0; i < ticks; i++) {
      // A sawtooth with one short spike two thirds in.
      const allocated = i === 600_001 ? 70_000 : (i % 1000) * 10;
      maxAllocated = Math.max(maxAllocated, allocated);
      t.note(i * 100, [gpu('GPU-a', allocated, allocated + 5)]);
    }
    const points = t.list();
    expect(points.length).toBeLessThanOrEqual(300);
    expect(points.length).toBeGreaterThan(250);
    expect(Math.max(...points.map((p) => p.allocatedBytes['GPU-a']!))).toBe(maxAllocated);
    expect(Math.max(...points.map((p) => p.reservedBytes['GPU-a']!))).toBe(maxAllocated + 5);
    expect(points[0]!.tMs).toBe(0);
    expect(points.every((p, i) => i === 0 || p.tMs > points[i - 1]!.tMs)).toBe(true);
  });
});
