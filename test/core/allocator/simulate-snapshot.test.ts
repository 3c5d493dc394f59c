/** simulateSnapshot on a small trace written as PyTorch's fixed-segment allocator would, ending in an OOM. */
import { describe, expect, it } from 'vitest';
import { simulateSnapshot } from '../../../src/core/allocator/index.js';
import { TRACE_ACTIONS, type MemorySnapshot, type SnapshotSegment } from '../../../src/core/snapshot/index.js';

const MiB = 2 ** 20;
const S1 = 2 ** 33;
const S2 = S1 + 64 * MiB;

function traceOf(entries: Array<[string, number, number]>): MemorySnapshot['traces'][number] {
  const n = entries.length;
  return {
    length: n,
    action: Uint8Array.from(entries.map(([a]) => TRACE_ACTIONS.indexOf(a as (typeof TRACE_ACTIONS)[number]))),
    addr: Float64Array.from(entries.map(([, addr]) => addr)),
    sizeBytes: Float64Array.from(entries.map(([, , size]) => size)),
    stream: new Float64Array(n),
    timeUs: new Float64Array(n).fill(NaN),
    stack: new Int32Array(n),
    stacks: [[]],
    otherActions: {},
  };
}

const block = (address: number, sizeBytes: number, allocated: boolean) => ({ address, sizeBytes, requestedBytes: allocated ? sizeBytes : 0, state: allocated ? 'active_allocated' : 'inactive', frames: [] });
const segment = (address: number, blocks: ReturnType<typeof block>[]): SnapshotSegment => ({ device: 0, address, totalBytes: 20 * MiB, stream: 0, segmentType: 'large', poolId: '0,0', isExpandable: false, blocks });

// Four 8 MiB tensors in two 20 MiB segments, the middle two freed, then 16 MiB requested with 50 MiB for the allocator.
const snapshot: MemorySnapshot = {
  generation: 'frames',
  segments: [
    segment(S1, [block(S1, 8 * MiB, true), block(S1 + 8 * MiB, 12 * MiB, false)]),
    segment(S2, [block(S2, 8 * MiB, false), block(S2 + 8 * MiB, 8 * MiB, true), block(S2 + 16 * MiB, 4 * MiB, false)]),
  ],
  traces: [traceOf([
    ['segment_alloc', S1, 20 * MiB], ['alloc', S1, 8 * MiB], ['alloc', S1 + 8 * MiB, 8 * MiB],
    ['segment_alloc', S2, 20 * MiB], ['alloc', S2, 8 * MiB], ['alloc', S2 + 8 * MiB, 8 * MiB],
    ['free_requested', S1 + 8 * MiB, 8 * MiB], ['free_completed', S1 + 8 * MiB, 8 * MiB],
    ['free_requested', S2, 8 * MiB], ['free_completed', S2, 8 * MiB],
    ['oom', 10 * MiB, 16 * MiB],
  ])],
  allocatorSettings: null,
  externalAnnotationCount: 0,
  unknownKeys: [],
};

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
