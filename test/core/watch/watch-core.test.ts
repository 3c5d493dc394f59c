/** Memory bar segments, series, trends and sparklines of the live view. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { memorySegments, memorySegmentsByGpu, sparkline, trendOf, type MemorySegments } from '../../../src/core/watch/index.js';
import type { DeviceAccounting, ProcessView } from '../../../src/core/diagnose/index.js';
import { GiB, MiB } from '../../../src/core/units.js';

const view = (pid: number, uid: number, usedBytes: number | null, visible = true): ProcessView =>
  ({ pid, uid, usedBytes, visible, gpuIndex: 0 }) as unknown as ProcessView;

const acc = (over: Partial<DeviceAccounting>): DeviceAccounting => ({
  gpuIndex: 0, gpuUuid: 'GPU-0', name: null, totalBytes: 80 * GiB, reservedBytes: 512 * MiB, usedBytes: 0, freeBytes: null,
  visibleBytes: 0, notVisibleBytes: 0, residualBytes: 0, unknownPids: [], pids: [], unknowns: [], pytorch: [], ...over,
});

describe('memorySegments', () => {
  it('splits used memory into PyTorch parts, yours, other users, not visible and unattributed, summing to used', () => {
    const views = [view(1, 1000, 20 * GiB), view(2, 1000, 3 * GiB), view(3, 2000, 5 * GiB), view(4, 3000, 2 * GiB, false)];
    const a = acc({
      usedBytes: 31 * GiB, visibleBytes: 28 * GiB, notVisibleBytes: 2 * GiB, residualBytes: 1 * GiB,
      pytorch: [{ pid: 1, gpuUuid: 'GPU-0', processUsedBytes: 20 * GiB, allocatedBytes: 12 * GiB, reservedBytes: 18 * GiB, cachedBytes: 6 * GiB, nonPytorchBytes: 2 * GiB, numAllocRetries: 0, unavailable: {} }],
    });
    const s = memorySegments(a, views, 1000);
    expect(s).toMatchObject({ pytorchAllocatedBytes: 12 * GiB, pytorchCachedBytes: 6 * GiB, mineBytes: 5 * GiB, othersBytes: 5 * GiB, notVisibleBytes: 2 * GiB, unattributedBytes: 1 * GiB, reservedBytes: 512 * MiB });
    const sum = s.pytorchAllocatedBytes + s.pytorchCachedBytes + s.mineBytes + s.othersBytes + s.notVisibleBytes + s.unattributedBytes;
    expect(sum).toBe(31 * GiB);
  });

  it('without a viewer (a recording) counts every visible process as one part', () => {
    const s = memorySegments(acc({ usedBytes: 8 * GiB, residualBytes: 0 }), [view(1, 1000, 3 * GiB), view(2, 2000, 5 * GiB)], null);
    expect(s.mineBytes).toBe(8 * GiB);
    expect(s.othersBytes).toBe(0);
  });
});

describe('memorySegmentsByGpu', () => {
  /** The rule written out per GPU, one filter over every view for each: what the panel did before. */
  function reference(a: DeviceAccounting, views: readonly ProcessView[], viewerUid: number | null): MemorySegments {
    const split = (pid: number): number => a.pytorch.filter((s) => s.pid === pid).reduce((sum, s) => (sum > 0 ? sum : (s.allocatedBytes ?? 0) + (s.cachedBytes ?? 0)), 0);
    const mineOrOthers = views.filter((v) => v.gpuIndex === a.gpuIndex && v.visible && v.usedBytes !== null).map((v) => ({ v, rest: Math.max(0, (v.usedBytes as number) - split(v.pid)) }));
    return {
      pytorchAllocatedBytes: a.pytorch.reduce((sum, s) => sum + (s.allocatedBytes ?? 0), 0),
      pytorchCachedBytes: a.pytorch.reduce((sum, s) => sum + (s.cachedBytes ?? 0), 0),
      mineBytes: mineOrOthers.filter(({ v }) => !(viewerUid !== null && v.uid !== null && v.uid !== viewerUid)).reduce((sum, x) => sum + x.rest, 0),
      othersBytes: mineOrOthers.filter(({ v }) => viewerUid !== null && v.uid !== null && v.uid !== viewerUid).reduce((sum, x) => sum + x.rest, 0),
      notVisibleBytes: a.notVisibleBytes,
      unattributedBytes: Math.max(0, a.residualBytes ?? 0),
      reservedBytes: a.reservedBytes ?? 0,
      totalBytes: a.totalBytes,
    };
  }

  it('gives every GPU what the one-GPU rule gives it, in one pass over the rows', () => {
    const viewArb = fc.record({
      pid: fc.integer({ min: 1, max: 12 }), uid: fc.option(fc.constantFrom(1000, 2000), { nil: null }),
      usedBytes: fc.option(fc.integer({ min: 0, max: 4096 }).map((n) => n * MiB), { nil: null }),
      visible: fc.boolean(), gpuIndex: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    }).map((v) => v as unknown as ProcessView);
    const splitArb = fc.record({ pid: fc.integer({ min: 1, max: 12 }), allocatedBytes: fc.option(fc.integer({ min: 0, max: 2048 }).map((n) => n * MiB), { nil: null }), cachedBytes: fc.option(fc.integer({ min: 0, max: 512 }).map((n) => n * MiB), { nil: null }) });
    fc.assert(fc.property(fc.array(viewArb, { maxLength: 40 }), fc.array(fc.uniqueArray(splitArb, { selector: (s) => s.pid, maxLength: 3 }), { minLength: 3, maxLength: 3 }), fc.option(fc.constantFrom(1000, 2000), { nil: null }), (views, splits, viewer) => {
      const accounting = splits.map((pytorch, gpuIndex) => acc({ gpuIndex, residualBytes: gpuIndex - 1, notVisibleBytes: gpuIndex * MiB, pytorch: pytorch.map((s) => ({ ...s, gpuUuid: `GPU-${gpuIndex}` })) as unknown as DeviceAccounting['pytorch'] }));
      const all = memorySegmentsByGpu(accounting, views, viewer);
      // GPU 3 has rows but no accounting: nothing for it.
      expect([...all.keys()]).toEqual([0, 1, 2]);
      for (const a of accounting) {
        expect(all.get(a.gpuIndex)).toEqual(reference(a, views, viewer));
        expect(memorySegments(a, views, viewer)).toEqual(reference(a, views, viewer));
      }
    }), { numRuns: 300 });
  });
});

describe('trend and sparkline', () => {
  it('calls a series growing only beyond the tolerance', () => {
    expect(trendOf([1 * GiB, null, 1 * GiB + 10 * MiB])).toBe('steady');
    expect(trendOf([1 * GiB, 2 * GiB])).toBe('growing');
    expect(trendOf([2 * GiB, 1 * GiB])).toBe('shrinking');
    expect(trendOf([null, 1 * GiB])).toBe('unknown');
  });

  it('is always exactly `width` characters, with full blocks at the maximum', () => {
    expect(sparkline([0, 40, 80], 5, 80)).toBe('  ▁▅█');
    fc.assert(fc.property(fc.array(fc.option(fc.nat(), { nil: null })), fc.integer({ min: 1, max: 200 }), fc.option(fc.nat(), { nil: null }), (series, width, max) => {
      expect([...sparkline(series, width, max)].length).toBe(width);
    }));
  });
});
