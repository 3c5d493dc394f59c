/** The per-GPU PyTorch summary of a run: the split at the tree's peak, and the run-wide allocator numbers. */
import { describe, expect, it } from 'vitest';
import {
  applyCompanionMessage, createCompanionState, finishPytorchSummary, foldPytorchSample, splitProcessMemory,
  type AllocatorStats, type PytorchGpuSummary,
} from '../../../src/core/companion/index.js';
import { MiB } from '../../../src/core/units.js';
const U = 'GPU-a';

function stats(allocated: number, reserved: number, extra: Partial<AllocatorStats> = {}): AllocatorStats {
  return {
    device: 0, allocatedBytes: allocated, reservedBytes: reserved, activeBytes: null, inactiveSplitBytes: null, requestedBytes: null,
    peakAllocatedBytes: allocated, peakReservedBytes: reserved, peakActiveBytes: null, numAllocRetries: 0, numOoms: 0, ...extra,
  };
}

describe('foldPytorchSample', () => {
  it('keeps the split of the sample where the tree held the most (the first one on a plateau)', () => {
    const best = new Map<string, PytorchGpuSummary>();
    const at = (t: number, nvml: number, tree: number, s: AllocatorStats): void =>
      foldPytorchSample(best, t, [splitProcessMemory(7, U, nvml, s)], { [U]: tree }, () => 3);
    at(0, 600 * MiB, 600 * MiB, stats(50 * MiB, 100 * MiB));
    at(10, 900 * MiB, 1000 * MiB, stats(300 * MiB, 400 * MiB)); // 100 MiB of the tree is a worker without torch
    at(20, 900 * MiB, 1000 * MiB, stats(1 * MiB, 400 * MiB)); // same total later: not taken
    at(30, 500 * MiB, 500 * MiB, stats(0, 0));
    const s = best.get(U) as PytorchGpuSummary;
    expect(s).toMatchObject({
      gpuIndex: 3, atMs: 10, pids: [7], treeBytes: 1000 * MiB, processUsedBytes: 900 * MiB, allocatedBytes: 300 * MiB, reservedBytes: 400 * MiB,
      unallocatedBytes: 100 * MiB, nonPytorchBytes: 500 * MiB, otherProcessesBytes: 100 * MiB,
    });
    expect(s.allocatedBytes! + s.unallocatedBytes! + s.nonPytorchBytes! + s.otherProcessesBytes!).toBe(s.treeBytes);
  });
});

describe('finishPytorchSummary', () => {
  it('adds the allocator peaks, retries and OOMs, and keeps GPUs NVML never showed', () => {
    const state = createCompanionState();
    const base = { schemaVersion: 1, pid: 7 } as const;
    applyCompanionMessage(state, { ...base, type: 'devices', timeMs: 1, devices: [{ device: 0, uuid: U, name: null, totalBytes: null }, { device: 1, uuid: 'GPU-b', name: null, totalBytes: null }] });
    applyCompanionMessage(state, { ...base, type: 'stats', timeMs: 2, seq: 1, devices: [stats(10, 20, { peakAllocatedBytes: 900, numAllocRetries: 2, numOoms: 1 }), { ...stats(5, 6), device: 1 }] });
    applyCompanionMessage(state, { ...base, type: 'stats', timeMs: 3, seq: 2, devices: [stats(10, 20, { peakAllocatedBytes: 15, numAllocRetries: 2, numOoms: 1 })] });
    const best = new Map<string, PytorchGpuSummary>();
    foldPytorchSample(best, 5, [splitProcessMemory(7, U, 100, stats(10, 20))], { [U]: 100 }, () => 0);
    const out = finishPytorchSummary(best, state);
    expect(out.map((g) => [g.gpuUuid, g.peakAllocatedBytes, g.numAllocRetries, g.numOoms, g.treeBytes])).toEqual([
      [U, 900, 2, 1, 100],
      ['GPU-b', 5, 0, 0, 0],
    ]);
    expect(out[1]?.nonPytorchBytes).toBeNull();
  });
});
