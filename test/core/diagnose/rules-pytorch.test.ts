/**
 * PyTorch's split in the diagnosis: processes with live companion statistics are split exactly
 * (allocated / cached / non-PyTorch), the others still say the split is unknown; the two rules that read
 * the split ('alloc-retries', 'pytorch-cache') fire on their evidence and not without it.
 */
import { describe, expect, it } from 'vitest';
import type { AllocatorStats, LiveCompanionProcess, StepSummary } from '../../../src/core/companion/index.js';
import { diagnose, PYTORCH_SPLIT_UNKNOWN } from '../../../src/core/diagnose/index.js';
import { check, device, GiB, input, MiB, proc, windowOf } from './build.js';

const UUID0 = 'GPU-00000000-aaaa-bbbb-cccc-000000000000';

function stats(allocated: number, reserved: number, retries = 0): AllocatorStats {
  return {
    device: 0, allocatedBytes: allocated, reservedBytes: reserved, activeBytes: allocated, inactiveSplitBytes: reserved - allocated,
    requestedBytes: allocated, peakAllocatedBytes: allocated, peakReservedBytes: reserved, peakActiveBytes: allocated, numAllocRetries: retries, numOoms: 0,
  };
}

function live(pid: number, s: AllocatorStats): Record<number, LiveCompanionProcess> {
  return { [pid]: { pid, startTicks: 100, devices: [{ device: 0, gpuUuid: UUID0, timeMs: 2_000_000, stats: s }] } };
}

/** pid 10 holds `nvml` bytes on GPU 0 (as NVML reports it); pid 11 is another process without companion. */
function window(nvml: number, env: Record<string, string> | null = {}) {
  return windowOf(2, () => ({
    devices: [device(0, nvml + 2 * GiB, { utilPct: 50 })],
    processes: [proc(10, 0, nvml, { smUtilPct: 50, env }), proc(11, 0, 2 * GiB, { smUtilPct: 50, cmd: ['python', 'eval.py'], env })],
  }));
}

describe('PyTorch split in the accounting', () => {
  it('splits a process with companion statistics exactly and keeps the others unknown', () => {
    const report = diagnose(input(window(30 * GiB), { companion: live(10, stats(20 * GiB, 25 * GiB)) }));
    const acc = report.accounting[0]!;
    expect(acc.pytorch).toEqual([expect.objectContaining({
      pid: 10, processUsedBytes: 30 * GiB, allocatedBytes: 20 * GiB, reservedBytes: 25 * GiB, cachedBytes: 5 * GiB, nonPytorchBytes: 5 * GiB,
    })]);
    expect(acc.unknowns).toContain(`${PYTORCH_SPLIT_UNKNOWN}: pid 11 (not supervised by a gpumem run with the companion)`);
    // Without companion data the split is unknown for the whole GPU, as before.
    const plain = diagnose(input(window(30 * GiB))).accounting[0]!;
    expect(plain.pytorch).toEqual([]);
    expect(plain.unknowns).toContain(PYTORCH_SPLIT_UNKNOWN);
  });

  it('ignores statistics for another GPU, and never shows a negative non-PyTorch part', () => {
    const other = { 10: { pid: 10, startTicks: 1, devices: [{ device: 0, gpuUuid: 'GPU-ffffffff', timeMs: 1, stats: stats(1, 2) }] } };
    expect(diagnose(input(window(30 * GiB), { companion: other })).accounting[0]!.pytorch).toEqual([]);
    const behind = diagnose(input(window(20 * GiB), { companion: live(10, stats(20 * GiB, 25 * GiB)) })).accounting[0]!.pytorch[0]!;
    expect(behind.nonPytorchBytes).toBeNull();
    expect(behind.unavailable.nonPytorchBytes).toMatch(/different moments/);
  });
});

describe('rules on the PyTorch split', () => {
  it("'alloc-retries' fires on num_alloc_retries > 0 with the numbers, and not at 0", () => {
    const found = check('alloc-retries', input(window(30 * GiB), { companion: live(10, stats(20 * GiB, 25 * GiB, 3)) }));
    expect(found).toHaveLength(1);
    expect(found[0]!.evidence.pids).toEqual([10]);
    expect(found[0]!.evidence.details.numAllocRetries).toBe(3);
    expect(found[0]!.title).toContain('retried 3 times');
    expect(check('alloc-retries', input(window(30 * GiB), { companion: live(10, stats(20 * GiB, 25 * GiB, 0)) }))).toEqual([]);
    expect(check('alloc-retries', input(window(30 * GiB)))).toEqual([]);
  });

  it("'pytorch-cache' fires on a large unallocated share with the bytes and the allocator advice", () => {
    const found = check('pytorch-cache', input(window(30 * GiB), { companion: live(10, stats(16 * GiB, 25 * GiB)) }));
    expect(found).toHaveLength(1);
    expect(found[0]!.evidence.bytes).toBe(9 * GiB);
    expect(found[0]!.fix).toContain('expandable_segments:True');
    const on = check('pytorch-cache', input(window(30 * GiB, { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' }), { companion: live(10, stats(16 * GiB, 25 * GiB)) }));
    expect(on[0]!.fix).toContain('empty_cache');
    // Small in bytes, or small as a share: the cache doing its job.
    expect(check('pytorch-cache', input(window(30 * GiB), { companion: live(10, stats(25 * GiB - 900 * MiB, 25 * GiB)) }))).toEqual([]);
    expect(check('pytorch-cache', input(window(80 * GiB), { companion: live(10, stats(60 * GiB, 75 * GiB)) }))).toEqual([]);
  });
});

describe('step timing from the live companion file', () => {
  const steps = (dataWaitShare: number, o: Partial<StepSummary> = {}): StepSummary => ({
    steps: 20, meanStepMs: 40, meanDataWaitMs: 40 * dataWaitShare, dataWaitShare, samplesPerSec: 2400, batchSeen: 96, batchMin: 96, batchMax: 96,
    batchAsked: null, loader: { numWorkers: 2, pinMemory: false, persistentWorkers: false, prefetchFactor: 2 }, cpuCount: 16, ...o,
  });
  const withSteps = (s: StepSummary): Record<number, LiveCompanionProcess> => ({ 10: { ...live(10, stats(GiB, GiB))[10]!, steps: s } });

  it("'input-bound' fires at 62 % data wait with the loader's settings and a concrete fix, on the process's GPU", () => {
    const [f] = check('input-bound', input(window(4 * GiB), { companion: withSteps(steps(0.62)) }));
    expect(f?.title).toBe('pid 10 is input-bound: the loop waited for data 62% of step time (24.8 ms of 40.0 ms per step over 20 steps); ' +
      'num_workers 2 on 16 cores, pin_memory off, persistent_workers off, prefetch_factor 2');
    expect(f?.fix).toMatch(/^raise DataLoader num_workers from 2 \(up to 15, the free cores\), pin_memory=True, persistent_workers=True/);
    expect(f?.evidence).toMatchObject({ pids: [10], gpuIndexes: [0], summary: '20 steps of 40.0 ms, 62% waiting for data, 2400.0 samples/s, batch 96' });
  });
  it("'input-bound' stays quiet below 30 %, under 5 steps, and without step timing", () => {
    expect(check('input-bound', input(window(4 * GiB), { companion: withSteps(steps(0.29)) }))).toEqual([]);
    expect(check('input-bound', input(window(4 * GiB), { companion: withSteps(steps(0.9, { steps: 4 })) }))).toEqual([]);
    expect(check('input-bound', input(window(4 * GiB), { companion: live(10, stats(GiB, GiB)) }))).toEqual([]);
  });
  it("'batch-override' fires when asked and seen differ, and not when they agree or nothing was asked", () => {
    const [f] = check('batch-override', input(window(4 * GiB), { companion: withSteps(steps(0.1, { batchAsked: 128 })) }));
    expect(f?.title).toBe('pid 10: batch size asked 128, used 96');
    expect(check('batch-override', input(window(4 * GiB), { companion: withSteps(steps(0.1, { batchAsked: 96 })) }))).toEqual([]);
    expect(check('batch-override', input(window(4 * GiB), { companion: withSteps(steps(0.1)) }))).toEqual([]);
  });

  it("'blocking-copy' (warning) and 'sync-calls' (info) fire on their figures and stay quiet without them", () => {
    const copies = { countPerStep: 1, bytesPerStep: 24 * MiB, msPerStep: 3, blockingBytesPerStep: 24 * MiB, blockingMsPerStep: 3, blockingShare: 0.075, pageableBytesPerStep: 24 * MiB };
    const syncs = { stepShare: 1, callsPerStep: 1, msPerStep: 2, byKind: { item: 1 } };
    const busy = input(window(4 * GiB), { companion: withSteps(steps(0.1, { copies, syncs })) });
    expect(check('blocking-copy', busy)[0]).toMatchObject({ severity: 'warning', evidence: { pids: [10], gpuIndexes: [0] } });
    expect(check('blocking-copy', busy)[0]?.title).toContain('copies 24.00 MiB per step to the GPU blocking');
    expect(check('sync-calls', busy)[0]).toMatchObject({ severity: 'info', evidence: { pids: [10] } });
    const calm = input(window(4 * GiB), { companion: withSteps(steps(0.1, { copies: { ...copies, blockingShare: 0.01 }, syncs: { ...syncs, stepShare: 0.5 } })) });
    expect([...check('blocking-copy', calm), ...check('sync-calls', calm)]).toEqual([]);
  });
});
