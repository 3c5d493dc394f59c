/**
 * The simulation against allocations real GPUs made: each snapshot's trace is replayed under the settings the
 * run used, and the simulated end state must equal the snapshot's segments byte for byte, and every simulated
 * allocation must land at the address the real allocator chose.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSnapshotPickle } from '../../../src/core/snapshot/index.js';
import { capacityAtOom, replayTrace, settingsFromSnapshot } from '../../../src/core/allocator/index.js';

const dir = new URL('../../fixtures/snapshot/real/', import.meta.url);
const load = (name: string) => readSnapshotPickle(new Uint8Array(readFileSync(new URL(name, dir))));

// Which devices have a trace that starts with the process (no memory before its first event): facts about the files.
const FILES: Array<[string, Record<number, boolean>]> = [
  ['constructor_memory_snapshot.pickle', { 0: true, 1: true, 2: true }],
  ['octreenca_my_snapshot.pickle', { 0: false }],
  ['kkaitlyn_ctx128_forward_mixed.pickle', { 0: false }],
  ['cranberrii_memory_snapshot.pickle', { 0: false }],
  ['jaspersolt_snapshot.pickle', { 0: false }],
  ['silmont_memory_forward_bf16_128.pickle', { 0: false }],
];

const layout = (segs: Array<{ address: number; sizeBytes: number; blocks: Array<{ offset: number; sizeBytes: number; allocated: boolean }> }>) =>
  segs.map((s) => `${s.address}+${s.sizeBytes}:${s.blocks.map((b) => `${b.offset}/${b.sizeBytes}/${b.allocated ? 'A' : 'f'}`).join(',')}`).sort();

describe.each(FILES)('%s', (name, covers) => {
  const snap = load(name);
  const settings = settingsFromSnapshot(snap.allocatorSettings);
  for (const [device, wholeRun] of Object.entries(covers)) {
    it(`device ${device}: replay lands every allocation where the real allocator put it and ends in the snapshot's segments`, () => {
      const d = Number(device);
      const trace = snap.traces[d];
      if (!trace) throw new Error('no trace');
      const endSegments = snap.segments.filter((s) => s.device === d);
      const endReserved = endSegments.reduce((sum, s) => sum + s.totalBytes, 0);
      const r = replayTrace(trace, { settings, endSegments, capacityBytes: capacityAtOom(trace, endReserved) ?? undefined });
      expect(r.coversWholeRun).toBe(wholeRun);
      expect(r.seededSegments > 0).toBe(!wholeRun);
      expect(r.addressChecks).toBeGreaterThan(0);
      expect(r.addressMatches).toBe(r.addressChecks);
      expect(r.endReservedBytes).toBe(endReserved);
      expect(r.segments.length).toBe(endSegments.length);
      const real = endSegments.map((s) => ({
        address: s.address,
        sizeBytes: s.totalBytes,
        blocks: s.blocks.map((b) => ({ offset: b.address - s.address, sizeBytes: b.sizeBytes, allocated: b.state === 'active_allocated' })),
      }));
      expect(layout(r.segments)).toEqual(layout(real));
      // An OOM in the real run is an OOM in the simulation too.
      const realOoms = Array.from(trace.action.subarray(0, trace.length)).filter((a) => a === 8).length;
      expect(r.ooms.filter((o) => !o.succeeded).length).toBe(realOoms);
    });
  }
});

it('the comparison can fail: the expandable-segments run replayed with fixed segments does not match', () => {
  const snap = load('constructor_memory_snapshot.pickle');
  const trace = snap.traces[0];
  if (!trace) throw new Error('no trace');
  const endSegments = snap.segments.filter((s) => s.device === 0);
  const r = replayTrace(trace, { settings: settingsFromSnapshot(null), endSegments });
  expect(r.addressMatches).toBeLessThan(r.addressChecks);
  expect(r.segments.length).not.toBe(endSegments.length);
});

it('any trace, however damaged, replays without an internal error or a hang', async () => {
  const fc = (await import('fast-check')).default;
  const { TRACE_ACTIONS } = await import('../../../src/core/snapshot/index.js');
  const MiB = 2 ** 20;
  const entry = fc.record({
    action: fc.integer({ min: 0, max: TRACE_ACTIONS.length }),
    addr: fc.oneof(fc.integer({ min: 0, max: 64 }).map((k) => 2 ** 40 + k * MiB), fc.double()),
    size: fc.oneof(fc.integer({ min: 0, max: 200 * MiB }), fc.double(), fc.constantFrom(NaN, -1, Infinity, 2 ** 60)),
    stream: fc.integer({ min: 0, max: 2 }),
  });
  fc.assert(fc.property(fc.array(entry, { maxLength: 300 }), fc.boolean(), fc.boolean(), (entries, expandable, seed) => {
    const n = entries.length;
    const trace = {
      length: n,
      action: Uint8Array.from(entries.map((e) => e.action)),
      addr: Float64Array.from(entries.map((e) => e.addr)),
      sizeBytes: Float64Array.from(entries.map((e) => e.size)),
      stream: Float64Array.from(entries.map((e) => e.stream)),
      timeUs: new Float64Array(n).fill(NaN),
      stack: new Int32Array(n),
      stacks: [[]],
      otherActions: {},
    };
    const block = { address: 2 ** 40 + MiB, sizeBytes: seed ? MiB : NaN, requestedBytes: null, state: 'active_allocated', frames: [] };
    const endSegments = [{ device: 0, address: 2 ** 40, totalBytes: seed ? 20 * MiB : -5, stream: 0, segmentType: 'large', poolId: null, isExpandable: false, blocks: [block] }];
    const settings = settingsFromSnapshot(expandable ? { expandable_segments: true } : null);
    const r = replayTrace(trace, { settings, endSegments, capacityBytes: 512 * MiB });
    expect(r.endAllocatedBytes).toBeLessThanOrEqual(r.endReservedBytes);
  }), { numRuns: 300 });
});
