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
/** AddrMap's answer for an address with no live alloc (alloc indexes are ≥ 0, requested ones ≤ −1). */
const NONE = -(2 ** 31);

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

/**
 * The one pass that needs addresses: pairs every alloc with the events that end it. The live map holds, per
 * address, the alloc event currently there (−index − 1 once its free was requested). An alloc leaves it at
 * free_completed, or when another alloc takes its address (a ring buffer can lose the free in between).
 * A free_completed whose alloc was never requested (older writers, or the pair cut by the ring buffer) still
 * ends the allocation, so it counts against allocated bytes: such events are marked in `completes`.
 */
interface Pairing {
  /** Per event: 1 for a free_completed that lowers allocated bytes. */
  completes: Uint8Array;
  /** Per alloc event: 1 + the index of its free_requested, or 0 when none. */
  requestedAt: Int32Array;
  /** Per alloc event: 1 + the index at which it leaves the live set, or 0 when it never does. */
  endsAt: Int32Array;
  /** Events per action code, and the index of each code's first event. */
  counts: Float64Array;
  firstSeen: Float64Array;
  /** Net change of allocated/reserved bytes over the trace, and the lowest running values (≤ 0). */
  netAlloc: number;
  netReserved: number;
  minAlloc: number;
  minReserved: number;
}

// Unfilled entries of a fresh typed array are zero and, in a large one, untouched pages cost nothing: hence
// the 1-based indexes above.
function pairEvents(t: TraceColumns): Pairing {
  const n = t.length;
  const { action, addr } = t;
  const completes = new Uint8Array(n);
  const requestedAt = new Int32Array(n);
  const endsAt = new Int32Array(n);
  const counts = new Float64Array(256);
  const firstSeen = new Float64Array(256).fill(Infinity);
  let netAlloc = 0;
  let netReserved = 0;
  let minAlloc = 0;
  let minReserved = 0;
  const live = new AddrMap();
  for (let i = 0; i < n; i++) {
    const code = action[i] as number;
    if (counts[code] === 0) firstSeen[code] = i;
    counts[code] = (counts[code] as number) + 1;
    if (code === ALLOC || code === FREE_REQUESTED || code === FREE_COMPLETED) {
      const a = addr[i] as number;
      // One probe per event; NaN addresses (only in crafted files) take the map's slower general path.
      const slot = a === a ? live.find(a) : -1;
      const j = slot >= 0 ? live.valueAt(slot) : a === a ? NONE : live.get(a, NONE);
      if (code === ALLOC) {
        if (j !== NONE) endsAt[j >= 0 ? j : -j - 1] = i + 1;
        if (slot >= 0) live.setValueAt(slot, i);
        else live.set(a, i);
      } else if (code === FREE_REQUESTED) {
        if (j !== NONE && j >= 0) {
          requestedAt[j] = i + 1;
          if (slot >= 0) live.setValueAt(slot, -j - 1);
          else live.set(a, -j - 1);
        }
      } else if (j !== NONE) {
        if (j >= 0) completes[i] = 1;
        endsAt[j >= 0 ? j : -j - 1] = i + 1;
        if (slot >= 0) live.removeAt(slot);
        else live.delete(a);
      }
    }
    netAlloc += allocationDelta(t, completes, i);
    netReserved += reservedDelta(t, i);
    if (netAlloc < minAlloc) minAlloc = netAlloc;
    if (netReserved < minReserved) minReserved = netReserved;
  }
  return { completes, requestedAt, endsAt, counts, firstSeen, netAlloc, netReserved, minAlloc, minReserved };
}

/** Replays one device's trace (see the module comment). */
export function analyseTrace(t: TraceColumns, options: TraceOptions): TraceAnalysis {
  const n = t.length;
  const maxPoints = options.maxPoints ?? 1500;
  const { action, sizeBytes } = t;
  const pairing = pairEvents(t);
  const { completes, counts, firstSeen, netAlloc, netReserved, minAlloc, minReserved } = pairing;
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
  const moments: Array<{ index: number; allocated: number; reserved: number }> = [];
  const maxOoms = options.maxOoms ?? 5;
  let peakReserved = 0;
  let untilPoint = bucket;
  for (let i = 0; i < n; i++) {
    allocated += allocationDelta(t, completes, i);
    reserved += reservedDelta(t, i);
    if (action[i] === OOM && moments.length < maxOoms) moments.push({ index: i, allocated, reserved });
    if (allocated > peakBytes) {
      peakBytes = allocated;
      peakIndex = i;
      peakReserved = reserved;
    }
    if (bestIndex < 0 || allocated > bestAllocated) {
      bestIndex = i;
      bestAllocated = allocated;
      bestReserved = reserved;
    }
    if (--untilPoint === 0 || i === n - 1) {
      timeline.push({ eventIndex: bestIndex, timeUs: time(t, bestIndex), allocatedBytes: bestAllocated, reservedBytes: bestReserved });
      bestIndex = -1;
      untilPoint = bucket;
    }
  }
  const oomMoments = moments.map((m) => liveAt(t, pairing, m.index, m.allocated, m.reserved));
  return {
    eventCount: n,
    actions,
    startAllocatedBytes,
    startReservedBytes,
    timeline,
    peak: peakIndex >= 0 ? liveAt(t, pairing, peakIndex, peakBytes, peakReserved) : null,
    ooms: oomMoments.map((m) => ({ ...m, requestBytes: sizeBytes[m.eventIndex] as number, deviceFreeBytes: t.addr[m.eventIndex] as number })),
  };
}

/** How event i changes allocated bytes: alloc adds, free_requested (or an unrequested free_completed) subtracts. */
function allocationDelta(t: TraceColumns, completes: Uint8Array, i: number): number {
  const code = t.action[i];
  if (code === ALLOC) return t.sizeBytes[i] as number;
  if (code === FREE_REQUESTED || (code === FREE_COMPLETED && completes[i] === 1)) return -(t.sizeBytes[i] as number);
  return 0;
}

/** How event i changes reserved bytes: segment_alloc/map add, segment_free/unmap subtract. */
function reservedDelta(t: TraceColumns, i: number): number {
  const code = t.action[i];
  if (code === SEGMENT_ALLOC || code === SEGMENT_MAP) return t.sizeBytes[i] as number;
  if (code === SEGMENT_FREE || code === SEGMENT_UNMAP) return -(t.sizeBytes[i] as number);
  return 0;
}

function time(t: TraceColumns, i: number): number | null {
  const v = t.timeUs[i] as number;
  return Number.isNaN(v) ? null : v;
}

/**
 * The active allocations (by site) right after event i: allocs up to i that have not left the live set. A
 * block whose free was requested but not completed (record_stream) still holds its memory, so it is listed
 * until free_completed, while the allocated total already excludes it, as PyTorch's own counters do.
 */
function liveAt(t: TraceColumns, pairing: Pairing, i: number, allocated: number, reserved: number): LiveMoment {
  const { action, sizeBytes, stack, stacks } = t;
  const { requestedAt, endsAt } = pairing;
  const tally = new SiteTally();
  let tracedAllocated = 0;
  for (let j = 0; j <= i; j++) {
    const end = endsAt[j] as number;
    if (action[j] !== ALLOC || (end !== 0 && end - 1 <= i)) continue;
    tally.add(stacks[stack[j] as number] as readonly unknown[], sizeBytes[j] as number);
    const requested = requestedAt[j] as number;
    if (requested === 0 || requested - 1 > i) tracedAllocated += sizeBytes[j] as number;
  }
  if (allocated - tracedAllocated > 0) tally.addSite(BEFORE_RECORDING, allocated - tracedAllocated, 0);
  return { eventIndex: i, timeUs: time(t, i), allocatedBytes: allocated, reservedBytes: reserved, sites: tally.list() };
}
