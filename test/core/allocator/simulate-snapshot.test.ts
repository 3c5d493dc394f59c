/** simulateSnapshot on a small trace written as PyTorch's fixed-segment allocator would, ending in an OOM. */
import { describe, expect, it } from 'vitest';
import { simulateSnapshot } from '../../../src/core/allocator/index.js';
import { fixedSegmentOomSnapshot as snapshot, MiB } from './fixed-segment-oom.js';

describe('simulateSnapshot', () => {
  const [dev] = simulateSnapshot(snapshot, ['expandable_segments:True']);
  it('replays the recorded run exactly, OOM included', () => {
    expect(dev?.capacityBytes).toBe(50 * MiB);
    expect(dev?.actual.match).toEqual({ addressMatches: 4, addressChecks: 4, realEndReservedBytes: 40 * MiB, realSegmentCount: 2, identicalSegments: 2 });
    expect(dev?.actual.oomAvoided).toBe(false);
  });
  it('expandable segments put the two freed tensors side by side, and the 16 MiB request fits with 10 MiB to spare', () => {
    const w = dev?.whatIf[0];
    expect(w?.oomAvoided).toBe(true);
    expect(w?.oomSpareBytes).toBe(10 * MiB);
    expect(w?.peakReservedBytes).toBe(40 * MiB);
    expect(w?.earlierOomCount).toBe(0);
  });
});
