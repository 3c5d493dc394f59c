/** Memory bar segments, series, trends and sparklines of the live view. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { memorySegments, sparkline, trendOf } from '../../../src/core/watch/index.js';
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
