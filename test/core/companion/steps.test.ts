import { describe, expect, it } from 'vitest';
import { batchOverrideFinding, inputBoundFinding, summariseSteps } from '../../../src/core/companion/steps.js';
import type { StepsMessage } from '../../../src/core/companion/messages.js';

const base: StepsMessage = {
  schemaVersion: 1, pid: 7, timeMs: 0, type: 'steps', steps: 10, dataWaitMs: 30, stepMs: 100, samples: 11 * 96,
  batchSeen: 96, batchMin: 96, batchMax: 96, batchAsked: 128,
};

describe('step summary and findings', () => {
  it('means, share and samples/s from the totals', () => {
    const s = summariseSteps(base);
    expect(s).toMatchObject({ steps: 10, meanStepMs: 10, meanDataWaitMs: 3, dataWaitShare: 0.3, batchSeen: 96, batchAsked: 128 });
    // 10 steps of 96 in 0.1 s.
    expect(s.samplesPerSec).toBeCloseTo(9600, 6);
  });

  it('input-bound at 30 % of step time, not at 29 %, not with fewer than 5 steps', () => {
    const f = inputBoundFinding(7, summariseSteps(base));
    expect(f?.id).toBe('input-bound');
    expect(f?.title).toBe('pid 7 is input-bound: the loop waited for data 30% of step time (3.0 ms of 10.0 ms per step over 10 steps)');
    expect(f?.fix).toMatch(/num_workers.*pin_memory.*persistent_workers.*prefetch_factor/);
    expect(inputBoundFinding(7, summariseSteps({ ...base, dataWaitMs: 29 }))).toBeNull();
    expect(inputBoundFinding(7, summariseSteps({ ...base, steps: 4 }))).toBeNull();
  });

  it('tokens/s from the token totals the same way as samples/s, null when no batch showed token ids', () => {
    const s = summariseSteps({ ...base, tokens: 11 * 96 * 512 });
    expect(s.tokensPerSec).toBeCloseTo(9600 * 512, 6);
    expect(summariseSteps({ ...base, tokens: null }).tokensPerSec).toBeNull();
    expect(summariseSteps(base).tokensPerSec).toBeNull();
  });

  it('steps bounded by optimizer.step(): the step time stands, the data wait is unknown rather than 0', () => {
    const s = summariseSteps({ ...base, dataWaitMs: 0, boundary: 'optimizer', batchSeen: null, samples: 0 });
    expect(s).toMatchObject({ meanStepMs: 10, meanDataWaitMs: null, dataWaitShare: null, samplesPerSec: null, boundary: 'optimizer' });
    expect(inputBoundFinding(7, s)).toBeNull();
  });

  it('batch override when asked and seen differ; none when equal or not asked', () => {
    expect(batchOverrideFinding(7, summariseSteps(base))?.title).toBe('pid 7: batch size asked 128, used 96');
    expect(batchOverrideFinding(7, summariseSteps({ ...base, batchAsked: 96 }))).toBeNull();
    expect(batchOverrideFinding(7, summariseSteps({ ...base, batchAsked: null }))).toBeNull();
  });
});
