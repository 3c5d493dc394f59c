/**
 * The allocator state a trace starts from when it does not begin with the process (the trace is a ring buffer,
 * or recording was switched on late): the segments that existed before the first event and the blocks live in
 * them, worked out from the end snapshot and the trace. A segment existed at the start when the trace frees it
 * before creating it, or holds it at the end without creating it; a block was live at the start when the trace
 * frees it before allocating it (its size is then the request rounded by the actual settings: the one guess
 * here), or holds it at the end without allocating it (size exact).
 */
import { TRACE_ACTIONS, type SnapshotSegment, type TraceColumns } from '../snapshot/model-types.js';
import type { AllocatorSettings } from './settings.js';
import { isPossibleSize, roundSize } from './sizes.js';
import type { SeedSegment } from './segments.js';

const A = Object.fromEntries(TRACE_ACTIONS.map((a, i) => [a, i])) as Record<(typeof TRACE_ACTIONS)[number], number>;


/** Segments and live blocks before the trace's first event (empty for a trace that starts with the process). */
export function startState(trace: TraceColumns, endSegments: readonly SnapshotSegment[], settings: AllocatorSettings): SeedSegment[] {
  const firstSegmentEvent = new Map<number, { action: number; size: number; stream: number }>();
  const firstBlockEvent = new Map<number, { action: number; size: number }>();
  for (let i = 0; i < trace.length; i++) {
    const a = trace.action[i] as number;
    const addr = trace.addr[i] as number;
    if (!isPossibleSize(trace.sizeBytes[i] as number) || !Number.isSafeInteger(addr)) continue;
    if (a === A.segment_alloc || a === A.segment_free) {
      if (!firstSegmentEvent.has(addr)) firstSegmentEvent.set(addr, { action: a, size: trace.sizeBytes[i] as number, stream: trace.stream[i] as number });
    } else if (a === A.alloc || a === A.free_requested || a === A.free_completed) {
      if (!firstBlockEvent.has(addr)) firstBlockEvent.set(addr, { action: a, size: trace.sizeBytes[i] as number });
    }
  }
  const seeds: SeedSegment[] = [];
  for (const s of endSegments) {
    if (s.isExpandable === true || firstSegmentEvent.has(s.address) || !Number.isSafeInteger(s.address) || !isPossibleSize(s.totalBytes)) continue;
    seeds.push({ address: s.address, sizeBytes: s.totalBytes, stream: s.stream, allocations: [] });
  }
  for (const [address, e] of firstSegmentEvent) {
    if (e.action === A.segment_free) seeds.push({ address, sizeBytes: e.size, stream: e.stream, allocations: [] });
  }
  seeds.sort((x, y) => x.address - y.address);
  const home = (address: number): SeedSegment | undefined => {
    let lo = 0;
    let hi = seeds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((seeds[mid] as SeedSegment).address <= address) lo = mid + 1;
      else hi = mid;
    }
    const s = seeds[lo - 1];
    return s && address < s.address + s.sizeBytes ? s : undefined;
  };
  let nextId = -1_000_000_000;
  for (const [address, e] of firstBlockEvent) {
    if (e.action === A.alloc) continue;
    home(address)?.allocations.push({ id: nextId--, address, sizeBytes: roundSize(e.size, settings), requestedBytes: e.size });
  }
  for (const s of endSegments) {
    for (const b of s.blocks) {
      if (b.state !== 'active_allocated' && b.state !== 'active_pending_free') continue;
      if (firstBlockEvent.has(b.address) || !Number.isSafeInteger(b.address) || !isPossibleSize(b.sizeBytes)) continue;
      home(b.address)?.allocations.push({ id: nextId--, address: b.address, sizeBytes: b.sizeBytes, requestedBytes: b.requestedBytes ?? b.sizeBytes });
    }
  }
  return seeds;
}
