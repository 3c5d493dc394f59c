/** A small trace written as PyTorch's fixed-segment allocator would, ending in an OOM that expandable segments avoid. */
import { TRACE_ACTIONS, type MemorySnapshot, type SnapshotSegment } from '../../../src/core/snapshot/index.js';

export const MiB = 2 ** 20;
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
export const fixedSegmentOomSnapshot: MemorySnapshot = {
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

