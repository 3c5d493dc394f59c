/**
 * A fix that says "free the other holders" must name them, and must not say it when the GPU holds nothing but
 * the job itself (it used to say "free the other holders listed above" with no holder anywhere above).
 */
import { describe, expect, it } from 'vitest';
import type { AllocatorStats, LiveCompanionProcess } from '../../../src/core/companion/index.js';
import { check, device, GiB, input, MiB, proc, windowOf } from './build.js';

const usedFull = 81559 * MiB - 479 * MiB - 2 * GiB;

describe('near-capacity names the other holders, or none', () => {
  it('a GPU held only by the training job: no "other holders" in the fix', () => {
    const s = windowOf(2, () => ({ devices: [device(0, usedFull, { utilPct: 95 })], processes: [proc(99, 0, usedFull, { smUtilPct: 90 })] }));
    const [f] = check('near-capacity', input(s));
    expect(f!.fix).not.toMatch(/other holders|listed above/);
    expect(f!.fix).toMatch(/will OOM: lower the batch size/);
  });

  it('with another process on the GPU the fix names its pid and bytes', () => {
    const s = windowOf(2, () => ({
      devices: [device(0, usedFull, { utilPct: 95 })],
      processes: [proc(99, 0, usedFull - 3 * GiB, { smUtilPct: 90 }), proc(120, 0, 3 * GiB, { smUtilPct: 0, ppid: 2000, cmd: ['python', 'eval.py'] })],
    }));
    const [f] = check('near-capacity', input(s));
    expect(f!.fix).toMatch(/free the other holders \(pid 120 3\.00 GiB\), or lower the batch size/);
    expect(f!.fix).not.toMatch(/listed above|pid 99/);
  });
});

describe('alloc-retries names the other holders, or none', () => {
  const stats: AllocatorStats = {
    device: 0, allocatedBytes: 20 * GiB, reservedBytes: 25 * GiB, activeBytes: 20 * GiB, inactiveSplitBytes: 5 * GiB,
    requestedBytes: 20 * GiB, peakAllocatedBytes: 20 * GiB, peakReservedBytes: 25 * GiB, peakActiveBytes: 20 * GiB, numAllocRetries: 2, numOoms: 0,
  };
  const companion: Record<number, LiveCompanionProcess> = { 10: { pid: 10, startTicks: 100, devices: [{ device: 0, gpuUuid: 'GPU-00000000-aaaa-bbbb-cccc-000000000000', timeMs: 2_000_000, stats }] } };

  it('alone on the GPU: no "other holders"', () => {
    const s = windowOf(2, () => ({ devices: [device(0, 30 * GiB, { utilPct: 50 })], processes: [proc(10, 0, 30 * GiB, { smUtilPct: 50 })] }));
    const [f] = check('alloc-retries', input(s, { companion }));
    expect(f!.fix).not.toMatch(/other holders/);
  });

  it('beside another process: its pid and bytes', () => {
    const s = windowOf(2, () => ({
      devices: [device(0, 32 * GiB, { utilPct: 50 })],
      processes: [proc(10, 0, 30 * GiB, { smUtilPct: 50 }), proc(11, 0, 2 * GiB, { smUtilPct: 50, ppid: 2000, cmd: ['python', 'eval.py'] })],
    }));
    const [f] = check('alloc-retries', input(s, { companion }));
    expect(f!.fix).toMatch(/free the other holders \(pid 11 2\.00 GiB\), or lower the batch/);
  });
});
