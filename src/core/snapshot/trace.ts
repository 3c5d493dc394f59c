/**
 * Replays a device trace: allocated and reserved bytes after every event, the peak and what was live then,
 * and the live set at each `oom` event. The trace is a ring buffer, so it may start after memory was already
 * allocated; the replay anchors its start so that it ends at the totals of the snapshot's own segments (or,
 * without segments, at the smallest start that never goes below zero), and memory with no `alloc` in the
 * trace is reported as one "before recording" site.
 */
import { AddrMap } from './hash-maps.js';
import { TRACE_ACTIONS, type TraceColumns } from './model-types.js';
import { SiteTally, type SiteTotal } from './sites.js';

export const BEFORE_RECORDING = '(allocated before the trace began)';

const code = (name: (typeof TRACE_ACTIONS)[number]): number => TRACE_ACTIONS.indexOf(name);
const ALLOC = code('alloc');
const FREE_REQUESTED = code('free_requested');
const FREE_COMPLETED = code('free_completed');
const SEGMENT_ALLOC = code('segment_alloc');
const SEGMENT_FREE = code('segment_free');
const SEGMENT_MAP = code('segment_map');
const SEGMENT_UNMAP = code('segment_unmap');
const OOM = code('oom');

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

/** Replays one device's trace (see the module comment). */
export function analyseTrace(t: TraceColumns, options: TraceOptions): TraceAnalysis {
  const n = t.length;
  const maxPoints = options.maxPoints ?? 1500;
  const { action, addr, sizeBytes } = t;
  const counts = new Float64Array(256);
  const firstSeen = new Float64Array(256).fill(Infinity);
  // A free_completed with no free_requested before it (older writers, or the pair cut by the ring buffer)
  // still ends the allocation; track which addresses are allocated so that case is counted once. Such
  // events are marked in `completes`, so both passes below know their effect without a second lookup.
  const allocatedAt = new AddrMap();
  const completes = new Uint8Array(n);
  let netAlloc = 0;
  let netReserved = 0;
  let minAlloc = 0;
  let minReserved = 0;
  for (let i = 0; i < n; i++) {
    const code = action[i] as number;
    if (counts[code] === 0) firstSeen[code] = i;
    counts[code] = (counts[code] as number) + 1;
    const size = sizeBytes[i] as number;
    if (code === ALLOC) {
      allocatedAt.set(addr[i] as number, 1);
      netAlloc += size;
    } else if (code === FREE_REQUESTED) {
      allocatedAt.delete(addr[i] as number);
      netAlloc -= size;
    } else if (code === FREE_COMPLETED) {
      if (allocatedAt.delete(addr[i] as number)) {
        completes[i] = 1;
        netAlloc -= size;
      }
    } else if (code === SEGMENT_ALLOC || code === SEGMENT_MAP) netReserved += size;
    else if (code === SEGMENT_FREE || code === SEGMENT_UNMAP) netReserved -= size;
    if (netAlloc < minAlloc) minAlloc = netAlloc;
    if (netReserved < minReserved) minReserved = netReserved;
  }
  // Named in the order each action first occurs, after the ones this reader does not know.
  const actions: Record<string, number> = { ...t.otherActions };
  const seen = TRACE_ACTIONS.map((_name, c) => c).filter((c) => (counts[c] as number) > 0);
  for (const c of seen.sort((a, b) => (firstSeen[a] as number) - (firstSeen[b] as number))) actions[TRACE_ACTIONS[c] as string] = counts[c] as number;
  const startAllocatedBytes = options.finalAllocatedBytes !== null ? Math.max(0, options.finalAllocatedBytes - netAlloc) : -minAlloc;
  const startReservedBytes = options.finalReservedBytes !== null ? Math.max(0, options.finalReservedBytes - netReserved) : -minReserved;

  const timeline: TimelinePoint[] = [];
  const bucket = Math.max(1, Math.ceil(n / maxPoints));
  let allocated = startAllocatedBytes;
  let reserved = startReservedBytes;
  let peakIndex = -1;
  let peakBytes = -1;
  let bestIndex = -1;
  let bestAllocated = 0;
  let bestReserved = 0;
  const oomIndexes: number[] = [];
  const maxOoms = options.maxOoms ?? 5;
  for (let i = 0; i < n; i++) {
    allocated += allocationDelta(t, completes, i);
    const code = action[i] as number;
    if (code === SEGMENT_ALLOC || code === SEGMENT_MAP) reserved += sizeBytes[i] as number;
    else if (code === SEGMENT_FREE || code === SEGMENT_UNMAP) reserved -= sizeBytes[i] as number;
    else if (code === OOM && oomIndexes.length < maxOoms) oomIndexes.push(i);
    if (allocated > peakBytes) {
      peakBytes = allocated;
      peakIndex = i;
    }
    if (bestIndex < 0 || allocated > bestAllocated) {
      bestIndex = i;
      bestAllocated = allocated;
      bestReserved = reserved;
    }
    if ((i + 1) % bucket === 0 || i === n - 1) {
      timeline.push({ eventIndex: bestIndex, timeUs: time(t, bestIndex), allocatedBytes: bestAllocated, reservedBytes: bestReserved });
      bestIndex = -1;
    }
  }
  const wanted = [...oomIndexes, ...(peakIndex >= 0 ? [peakIndex] : [])];
  const moments = liveAt(t, completes, wanted, startAllocatedBytes, startReservedBytes);
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

/** How event i changes allocated bytes: alloc adds, free_requested (or an unrequested free_completed) subtracts. */
function allocationDelta(t: TraceColumns, completes: Uint8Array, i: number): number {
  const code = t.action[i];
  if (code === ALLOC) return t.sizeBytes[i] as number;
  if (code === FREE_REQUESTED || (code === FREE_COMPLETED && completes[i] === 1)) return -(t.sizeBytes[i] as number);
  return 0;
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
function liveAt(t: TraceColumns, completes: Uint8Array, wanted: number[], startAlloc: number, startReserved: number): Map<number, LiveMoment> {
  const out = new Map<number, LiveMoment>();
  if (wanted.length === 0) return out;
  const want = new Set(wanted);
  const last = Math.max(...wanted);
  const { action, addr, sizeBytes } = t;
  // address → index of its alloc event; negative (−index − 1) once its free was requested.
  const live = new AddrMap();
  let allocated = startAlloc;
  let reserved = startReserved;
  for (let i = 0; i <= last; i++) {
    const code = action[i];
    const a = addr[i] as number;
    allocated += allocationDelta(t, completes, i);
    if (code === ALLOC) live.set(a, i);
    else if (code === FREE_REQUESTED) {
      const j = live.get(a, -1);
      if (j >= 0) live.set(a, -j - 1);
    } else if (code === FREE_COMPLETED) live.delete(a);
    else if (code === SEGMENT_ALLOC || code === SEGMENT_MAP) reserved += sizeBytes[i] as number;
    else if (code === SEGMENT_FREE || code === SEGMENT_UNMAP) reserved -= sizeBytes[i] as number;
    if (!want.has(i)) continue;
    const tally = new SiteTally();
    let tracedAllocated = 0;
    live.forEach((_addr, k) => {
      const j = k >= 0 ? k : -k - 1;
      tally.add(t.stacks[t.stack[j] as number] as readonly unknown[], sizeBytes[j] as number);
      if (k >= 0) tracedAllocated += sizeBytes[j] as number;
    });
    if (allocated - tracedAllocated > 0) tally.addSite(BEFORE_RECORDING, allocated - tracedAllocated, 0);
    out.set(i, { eventIndex: i, timeUs: time(t, i), allocatedBytes: allocated, reservedBytes: reserved, sites: tally.list() });
  }
  return out;
}
