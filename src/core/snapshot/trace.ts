/**
 * Replays a device trace: allocated and reserved bytes after every event, the peak and what was live then,
 * and the live set at each `oom` event. The trace is a ring buffer, so it may start after memory was already
 * allocated; the replay anchors its start so that it ends at the totals of the snapshot's own segments (or,
 * without segments, at the smallest start that never goes below zero), and memory with no `alloc` in the
 * trace is reported as one "before recording" site.
 */
import { TRACE_ACTIONS, type TraceColumns } from './model.js';
import { SiteTally, type SiteTotal } from './sites.js';

export const BEFORE_RECORDING = '(allocated before the trace began)';

const A = Object.fromEntries(TRACE_ACTIONS.map((a, i) => [a, i])) as Record<(typeof TRACE_ACTIONS)[number], number>;

export interface TimelinePoint {
  eventIndex: number;
  /** Microseconds since the epoch, or null in traces without time_us. */
  timeUs: number | null;
  allocatedBytes: number;
  reservedBytes: number;
}

/** The state right after one event. `sites` lists active blocks (allocated or awaiting a cross-stream free). */
export interface LiveMoment {
  eventIndex: number;
  timeUs: number | null;
  allocatedBytes: number;
  reservedBytes: number;
  sites: SiteTotal[];
}

export interface OomMoment extends LiveMoment {
  /** The rounded block size that could not be found (the entry's `size`). */
  requestBytes: number;
  /** What cudaMemGetInfo said was free (the entry's `device_free`). */
  deviceFreeBytes: number;
}

export interface TraceAnalysis {
  eventCount: number;
  actions: Record<string, number>;
  /** Allocated/reserved before the first event, inferred as described in the module comment. */
  startAllocatedBytes: number;
  startReservedBytes: number;
  /** At most `maxPoints` points; each keeps the highest allocated value of the events it covers. */
  timeline: TimelinePoint[];
  peak: LiveMoment | null;
  ooms: OomMoment[];
}

export interface TraceOptions {
  /** Final allocated/reserved bytes from the segments of this device, when the snapshot has them. */
  finalAllocatedBytes: number | null;
  finalReservedBytes: number | null;
  maxPoints?: number;
  /** Live sets are reconstructed for this many OOM events (default 5). */
  maxOoms?: number;
}

function deltas(t: TraceColumns, i: number): [number, number] {
  const a = t.action[i];
  const size = t.sizeBytes[i] as number;
  if (a === A.alloc) return [size, 0];
  if (a === A.free_requested) return [-size, 0];
  if (a === A.segment_alloc || a === A.segment_map) return [0, size];
  if (a === A.segment_free || a === A.segment_unmap) return [0, -size];
  return [0, 0];
}

/** Replays one device's trace (see the module comment). */
export function analyseTrace(t: TraceColumns, options: TraceOptions): TraceAnalysis {
  const n = t.length;
  const maxPoints = options.maxPoints ?? 1500;
  const actions: Record<string, number> = { ...t.otherActions };
  // A free_completed with no free_requested before it (older writers, or the pair cut by the ring buffer)
  // still ends the allocation; track which addresses are allocated so that case is counted once.
  const allocatedAt = new Map<number, number>();
  const effective = new Float64Array(n);
  let netAlloc = 0;
  let netReserved = 0;
  let minAlloc = 0;
  let minReserved = 0;
  for (let i = 0; i < n; i++) {
    const code = t.action[i] as number;
    const name = TRACE_ACTIONS[code];
    if (name) actions[name] = (actions[name] ?? 0) + 1;
    let [da, dr] = deltas(t, i);
    const addr = t.addr[i] as number;
    if (code === A.alloc) allocatedAt.set(addr, i);
    else if (code === A.free_requested) allocatedAt.delete(addr);
    else if (code === A.free_completed && allocatedAt.delete(addr)) da = -(t.sizeBytes[i] as number);
    effective[i] = da;
    netAlloc += da;
    netReserved += dr;
    minAlloc = Math.min(minAlloc, netAlloc);
    minReserved = Math.min(minReserved, netReserved);
  }
  const startAllocatedBytes = options.finalAllocatedBytes !== null ? Math.max(0, options.finalAllocatedBytes - netAlloc) : -minAlloc;
  const startReservedBytes = options.finalReservedBytes !== null ? Math.max(0, options.finalReservedBytes - netReserved) : -minReserved;

  const timeline: TimelinePoint[] = [];
  const bucket = Math.max(1, Math.ceil(n / maxPoints));
  let allocated = startAllocatedBytes;
  let reserved = startReservedBytes;
  let peakIndex = -1;
  let peakBytes = -1;
  let best: TimelinePoint | null = null;
  const oomIndexes: number[] = [];
  for (let i = 0; i < n; i++) {
    allocated += effective[i] as number;
    const code = t.action[i];
    if (code === A.segment_alloc || code === A.segment_map) reserved += t.sizeBytes[i] as number;
    else if (code === A.segment_free || code === A.segment_unmap) reserved -= t.sizeBytes[i] as number;
    if (code === A.oom && oomIndexes.length < (options.maxOoms ?? 5)) oomIndexes.push(i);
    if (allocated > peakBytes) {
      peakBytes = allocated;
      peakIndex = i;
    }
    if (!best || allocated > best.allocatedBytes) best = { eventIndex: i, timeUs: time(t, i), allocatedBytes: allocated, reservedBytes: reserved };
    if ((i + 1) % bucket === 0 || i === n - 1) {
      timeline.push(best);
      best = null;
    }
  }
  const wanted = [...oomIndexes, ...(peakIndex >= 0 ? [peakIndex] : [])];
  const moments = liveAt(t, effective, wanted, startAllocatedBytes, startReservedBytes);
  return {
    eventCount: n,
    actions,
    startAllocatedBytes,
    startReservedBytes,
    timeline,
    peak: peakIndex >= 0 ? (moments.get(peakIndex) ?? null) : null,
    ooms: oomIndexes.map((i) => ({ ...(moments.get(i) as LiveMoment), requestBytes: t.sizeBytes[i] as number, deviceFreeBytes: t.addr[i] as number })),
  };
}

function time(t: TraceColumns, i: number): number | null {
  const v = t.timeUs[i] as number;
  return Number.isNaN(v) ? null : v;
}

/**
 * Second pass: the active allocations (by site) right after each wanted event index. A block whose free was
 * requested but not completed (record_stream) still holds its memory, so it stays in the set until
 * free_completed, while the allocated total already excludes it, as PyTorch's own counters do.
 */
function liveAt(t: TraceColumns, effective: Float64Array, wanted: number[], startAlloc: number, startReserved: number): Map<number, LiveMoment> {
  const out = new Map<number, LiveMoment>();
  if (wanted.length === 0) return out;
  const want = new Set(wanted);
  const last = Math.max(...wanted);
  // address → index of its alloc event; negative (−index − 1) once its free was requested.
  const live = new Map<number, number>();
  let allocated = startAlloc;
  let reserved = startReserved;
  for (let i = 0; i <= last; i++) {
    const code = t.action[i];
    const addr = t.addr[i] as number;
    allocated += effective[i] as number;
    if (code === A.alloc) live.set(addr, i);
    else if (code === A.free_requested) {
      const j = live.get(addr);
      if (j !== undefined && j >= 0) live.set(addr, -j - 1);
    } else if (code === A.free_completed) live.delete(addr);
    else if (code === A.segment_alloc || code === A.segment_map) reserved += t.sizeBytes[i] as number;
    else if (code === A.segment_free || code === A.segment_unmap) reserved -= t.sizeBytes[i] as number;
    if (!want.has(i)) continue;
    const tally = new SiteTally();
    let tracedAllocated = 0;
    for (const k of live.values()) {
      const j = k >= 0 ? k : -k - 1;
      tally.add(t.frames[j] as readonly unknown[], t.sizeBytes[j] as number);
      if (k >= 0) tracedAllocated += t.sizeBytes[j] as number;
    }
    if (allocated - tracedAllocated > 0) tally.addSite(BEFORE_RECORDING, allocated - tracedAllocated, 0);
    out.set(i, { eventIndex: i, timeUs: time(t, i), allocatedBytes: allocated, reservedBytes: reserved, sites: tally.list() });
  }
  return out;
}
