import { describe, expect, it } from 'vitest';
import { summariseSteps, stepFindings } from '../../../src/core/companion/steps.js';
import { blockingCopyFinding, summariseCompute, summariseCopies, summariseSyncs, syncCallsFinding } from '../../../src/core/companion/transfers.js';
import type { StepsMessage } from '../../../src/core/companion/messages.js';
import { MiB } from '../../../src/core/units.js';

// 10 steps of 20 ms; per step a 24 MiB pageable blocking copy of 3 ms and a 1 MiB pinned non-blocking one of 0.1 ms.
const base: StepsMessage = {
  schemaVersion: 1, pid: 7, timeMs: 0, type: 'steps', steps: 10, dataWaitMs: 10, stepMs: 200, samples: 11 * 32,
  batchSeen: 32, batchMin: 32, batchMax: 32, batchAsked: null,
  copies: { count: 20, bytes: 250 * MiB, ms: 31, blockingCount: 10, blockingBytes: 240 * MiB, blockingMs: 30, pageableBytes: 240 * MiB },
  syncs: { steps: 10, byKind: { item: { count: 20, ms: 40 }, cpu: { count: 10, ms: 5 } } },
};

describe('copies and synchronising calls per step', () => {
  it('means per step from the totals', () => {
    expect(summariseCopies(base)).toEqual({
      countPerStep: 2, bytesPerStep: 25 * MiB, msPerStep: 3.1, blockingBytesPerStep: 24 * MiB, blockingMsPerStep: 3, blockingShare: 0.15, pageableBytesPerStep: 24 * MiB,
    });
    expect(summariseSyncs(base)).toEqual({ stepShare: 1, callsPerStep: 3, msPerStep: 4.5, byKind: { item: 2, cpu: 1 } });
    expect(summariseCopies({ ...base, copies: null })).toBeNull();
    expect(summariseSyncs({ ...base, steps: 0 })).toBeNull();
  });

  it('blocking copies at ≥ 5 % of step time, naming pageable memory or non_blocking', () => {
    const f = blockingCopyFinding(7, 10, summariseCopies(base), 5);
    expect(f?.title).toBe('pid 7 copies 24.00 MiB per step to the GPU blocking (24.00 MiB from pageable memory): 3.0 ms, 15% of step time');
    expect(f?.fix).toMatch(/^pin_memory=True in the DataLoader and \.to\(device, non_blocking=True\)/);
    const pinned = summariseCopies({ ...base, copies: { ...base.copies!, pageableBytes: 0 } });
    expect(blockingCopyFinding(7, 10, pinned, 5)?.title).toContain('blocking (non_blocking=False)');
    expect(blockingCopyFinding(7, 10, pinned, 5)?.fix).toMatch(/^the batches are pinned already: \.to\(device, non_blocking=True\)/);
    // 9.8 ms of 200 ms is 4.9 %: quiet; and quiet under 5 steps or without copy timing.
    expect(blockingCopyFinding(7, 10, summariseCopies({ ...base, copies: { ...base.copies!, blockingMs: 9.8 } }), 5)).toBeNull();
    expect(blockingCopyFinding(7, 4, summariseCopies({ ...base, steps: 4 }), 5)).toBeNull();
    expect(blockingCopyFinding(7, 10, null, 5)).toBeNull();
  });

  it('synchronising calls in ≥ 90 % of the steps, with the calls by kind; not in 8 of 10', () => {
    const f = syncCallsFinding(7, 10, summariseSyncs(base), 5);
    expect(f?.title).toBe('pid 7 makes the host wait for the GPU every step: 3.0 synchronising calls per step (.item() 2.0, .cpu() 1.0), 4.5 ms waiting');
    expect(f?.fix).toContain('total += loss.detach()');
    expect(syncCallsFinding(7, 10, summariseSyncs({ ...base, syncs: { ...base.syncs!, steps: 9 } }), 5)).not.toBeNull();
    expect(syncCallsFinding(7, 10, summariseSyncs({ ...base, syncs: { ...base.syncs!, steps: 8 } }), 5)).toBeNull();
  });

  it('GPU time per call of each phase from the CUDA-event totals; null before any was read', () => {
    const compute = { forwardMs: 40, forwardCount: 4, backwardMs: 80, backwardCount: 4, optimizerMs: 0, optimizerCount: 0, everySteps: 5, dropped: 0 };
    expect(summariseCompute({ ...base, compute })).toEqual({
      forwardMs: 10, backwardMs: 20, optimizerMs: null, forwardCount: 4, backwardCount: 4, optimizerCount: 0, everySteps: 5,
    });
    expect(summariseCompute({ ...base, compute: { ...compute, forwardCount: 0, backwardCount: 0 } })).toBeNull();
    expect(summariseCompute(base)).toBeNull();
  });

  it('the run lists every step finding the figures support, in order', () => {
    expect(stepFindings(7, summariseSteps({ ...base, dataWaitMs: 100, batchAsked: 64 })).map((f) => f.id))
      .toEqual(['input-bound', 'batch-override', 'blocking-copy', 'sync-calls']);
    expect(stepFindings(7, summariseSteps({ ...base, copies: undefined, syncs: undefined }))).toEqual([]);
  });
});
