/** The memory split: the three parts add up to NVML's figure exactly, or a part is null with its reason. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCompanionMessage,
  createCompanionState,
  splitByGpu,
  splitProcesses,
  splitProcessMemory,
  type AllocatorStats,
} from '../../../src/core/companion/index.js';
import type { GpuProcess } from '../../../src/core/index.js';
import { MiB } from '../../../src/core/units.js';

function stats(allocated: number | null, reserved: number | null, extra: Partial<AllocatorStats> = {}): AllocatorStats {
  return {
    device: 0, allocatedBytes: allocated, reservedBytes: reserved, activeBytes: allocated, inactiveSplitBytes: null,
    requestedBytes: null, peakAllocatedBytes: allocated, peakReservedBytes: reserved, peakActiveBytes: null,
    numAllocRetries: 0, numOoms: 0, ...extra,
  };
}

function gpuProcess(pid: number, gpuUuid: string, usedBytes: number | null): GpuProcess {
  return {
    pid, gpuUuid, gpuIndex: 0, gpuInstanceId: null, computeInstanceId: null, usedBytes, kind: 'compute', name: null,
    smUtilPct: null, host: null, unavailable: {},
  };
}

describe('splitProcessMemory', () => {
  it('allocated + cached + non-PyTorch = the process total, for any consistent numbers', () => {
    fc.assert(fc.property(fc.nat(2 ** 40), fc.nat(2 ** 40), fc.nat(2 ** 40), (allocated, cached, other) => {
      const s = splitProcessMemory(1, 'GPU-a', allocated + cached + other, stats(allocated, allocated + cached));
      expect(s.allocatedBytes).toBe(allocated);
      expect(s.cachedBytes).toBe(cached);
      expect(s.nonPytorchBytes).toBe(other);
      expect(s.unavailable).toEqual({});
    }));
  });

  it('answers the 45 GB vs 2 GB question', () => {
    const s = splitProcessMemory(9, 'GPU-a', 45 * 1024 * MiB, stats(2 * 1024 * MiB, 44 * 1024 * MiB + 512 * MiB));
    expect(s.cachedBytes).toBe(42.5 * 1024 * MiB);
    expect(s.nonPytorchBytes).toBe(512 * MiB);
  });

  it('refuses a negative non-PyTorch part and says why', () => {
    const s = splitProcessMemory(1, 'GPU-a', 100 * MiB, stats(10 * MiB, 200 * MiB));
    expect(s.nonPytorchBytes).toBeNull();
    expect(s.unavailable.nonPytorchBytes).toMatch(/different moments/);
  });

  it('is null with reasons when NVML or the companion lacks a number', () => {
    expect(splitProcessMemory(1, 'GPU-a', null, stats(1, 2)).unavailable.nonPytorchBytes).toMatch(/driver/);
    const none = splitProcessMemory(1, 'GPU-a', 5, null);
    expect([none.allocatedBytes, none.cachedBytes, none.nonPytorchBytes]).toEqual([null, null, null]);
    expect(none.unavailable.allocatedBytes).toMatch(/no PyTorch companion/);
  });
});

describe('state and per-GPU split', () => {
  it('matches processes by pid and GPU UUID, keeps peaks across resets, and sums per GPU', () => {
    const state = createCompanionState();
    const msg = (pid: number, timeMs: number, s: AllocatorStats) =>
      applyCompanionMessage(state, { schemaVersion: 1, type: 'stats', pid, timeMs, seq: timeMs, devices: [s] }, 'GPU-a,GPU-b');
    msg(10, 1, stats(100 * MiB, 300 * MiB));
    msg(10, 2, stats(50 * MiB, 300 * MiB, { peakAllocatedBytes: 60 * MiB })); // program reset its peak
    msg(11, 2, { ...stats(20 * MiB, 40 * MiB), device: 1 });
    expect(state.get(10)?.devices.get(0)?.maxPeakAllocatedBytes).toBe(100 * MiB);
    expect(state.get(11)?.devices.get(1)?.gpuUuid).toBe('GPU-b');

    const rows = splitProcesses([gpuProcess(10, 'GPU-a', 800 * MiB), gpuProcess(11, 'GPU-b', 340 * MiB), gpuProcess(12, 'GPU-a', 5 * MiB)], state);
    expect(rows.map((r) => [r.pid, r.nonPytorchBytes])).toEqual([[10, 500 * MiB], [11, 300 * MiB]]);
    const gpus = splitByGpu([...rows, splitProcessMemory(13, 'GPU-a', null, stats(1 * MiB, 2 * MiB))]);
    expect(gpus.find((g) => g.gpuUuid === 'GPU-b')).toMatchObject({ allocatedBytes: 20 * MiB, reservedBytes: 40 * MiB, nonPytorchBytes: 300 * MiB });
    // One unknown part makes the GPU's sum unknown, never a partial total.
    expect(gpus.find((g) => g.gpuUuid === 'GPU-a')).toMatchObject({ allocatedBytes: 51 * MiB, nonPytorchBytes: null, pids: [10, 13] });
  });

  it('does not let a late OOM report replace newer statistics', () => {
    const state = createCompanionState();
    applyCompanionMessage(state, { schemaVersion: 1, type: 'stats', pid: 1, timeMs: 20, seq: 1, devices: [stats(5, 10)] });
    applyCompanionMessage(state, {
      schemaVersion: 1, type: 'oom', pid: 1, timeMs: 10, source: 'observer', device: 0, requestedBytes: 99,
      deviceLimitBytes: 100, deviceFreeBytes: 1, stats: stats(50, 90), snapshotPath: null, snapshotError: null,
    });
    const d = state.get(1)?.devices.get(0);
    expect(d?.latest.allocatedBytes).toBe(5);
    expect(d?.maxPeakReservedBytes).toBe(90);
    expect(state.get(1)?.ooms).toHaveLength(1);
  });
});
