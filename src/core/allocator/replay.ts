/**
 * Replays a snapshot's device trace through the simulation: every `alloc`, `free_requested` and
 * `free_completed` the program made, `empty_cache` where the trace shows segments released outside an
 * allocation, and each `oom` retried as the request that failed. New segments take the addresses the real
 * run got where the trace shows the same segment being created, so block positions compare directly.
 */
import { TRACE_ACTIONS, type SnapshotSegment, type TraceColumns } from '../snapshot/model-types.js';
import { startState } from './seed.js';
import { AllocatorSim, type SimSegment } from './sim.js';
import type { AllocatorSettings } from './settings.js';
import { isPossibleSize, roundSize } from './sizes.js';

const A = Object.fromEntries(TRACE_ACTIONS.map((a, i) => [a, i])) as Record<(typeof TRACE_ACTIONS)[number], number>;

export interface ReplayOptions {
  settings: AllocatorSettings;
  capacityBytes?: number;
  version?: string;
  /** The device's segments in the snapshot: the end state, from which a trace that starts mid-run is seeded. */
  endSegments: readonly SnapshotSegment[];
}

export interface ReplayOom {
  eventIndex: number;
  requestBytes: number;
  /** Did the simulated allocator serve the request that failed in the real run? */
  succeeded: boolean;
  /** Device memory left beside the simulation's reserved bytes right after the request (capacity known). */
  spareBytes: number | null;
}

export interface ReplayResult {
  coversWholeRun: boolean;
  /** Real reserved bytes before the first event (0 when the trace starts with the process). */
  startReservedBytes: number;
  /** Allocations the real run made that fail in the simulation (the run would have died there). */
  failedAllocations: number;
  firstFailedEvent: number | null;
  /** alloc/oom entries left out because their size is not a possible request (damaged or crafted files). */
  skippedEvents: number;
  /** Segments installed before the first event (a trace that starts mid-run). */
  seededSegments: number;
  eventCount: number;
  /** Allocations whose simulated address equals the real one / allocations checked. */
  addressMatches: number;
  addressChecks: number;
  /** Frees of blocks whose allocation is not in the trace (a trace that starts mid-run). */
  unknownFrees: number;
  emptyCacheCalls: number;
  peakReservedBytes: number;
  peakAllocatedBytes: number;
  /** Reserved minus allocated when the reserved peak was reached. */
  fragmentationAtPeakBytes: number;
  endReservedBytes: number;
  endAllocatedBytes: number;
  numAllocRetries: number;
  ooms: ReplayOom[];
  segments: SimSegment[];
}

/** Real reserved bytes just before each event is not needed; this is the reserved total before the first one. */
export function traceStartReserved(trace: TraceColumns, endReservedBytes: number): number {
  let net = 0;
  for (let i = 0; i < trace.length; i++) {
    const a = trace.action[i];
    const size = trace.sizeBytes[i] as number;
    if (!isPossibleSize(size)) continue;
    if (a === A.segment_alloc || a === A.segment_map) net += size;
    else if (a === A.segment_free || a === A.segment_unmap) net -= size;
  }
  return endReservedBytes - net;
}

/** Replays one device's trace under `options.settings`; see the module comment. */
export function replayTrace(trace: TraceColumns, options: ReplayOptions): ReplayResult {
  const pending: Array<{ address: number; sizeBytes: number; expandable: boolean; known: boolean }> = [];
  // Real expandable segments seen so far as [base, end of the highest mapped page]: a mapping inside or right
  // after one extends it, any other one starts a new segment at its address.
  const realExpandable: Array<{ base: number; end: number }> = [];
  const extendsKnown = (address: number): boolean => realExpandable.some((r) => address >= r.base && address <= r.end);
  const sim = new AllocatorSim({
    settings: options.settings,
    capacityBytes: options.capacityBytes,
    version: options.version,
    segmentAddress: (sizeBytes, expandable) => {
      const i = pending.findIndex((p) => p.expandable === expandable && (expandable ? !p.known : p.sizeBytes === sizeBytes));
      if (i < 0) return null;
      const [p] = pending.splice(i, 1);
      return (p as { address: number }).address;
    },
  });
  const idOf = new Map<number, number>();
  const endReservedBytes = options.endSegments.reduce((sum, s) => sum + s.totalBytes, 0);
  const startReservedBytes = traceStartReserved(trace, endReservedBytes);
  let seededSegments = 0;
  if (startReservedBytes !== 0) {
    for (const seed of startState(trace, options.endSegments, options.settings)) {
      sim.seedSegment(seed);
      seededSegments++;
      for (const a of seed.allocations) idOf.set(a.address, a.id);
    }
  }
  let addressMatches = 0;
  let addressChecks = 0;
  let unknownFrees = 0;
  let emptyCacheCalls = 0;
  let inRelease = false;
  const ooms: ReplayOom[] = [];
  let skippedEvents = 0;
  let failedAllocations = 0;
  let firstFailedEvent: number | null = null;
  for (let i = 0; i < trace.length; i++) {
    const action = trace.action[i];
    const addr = trace.addr[i] as number;
    const size = trace.sizeBytes[i] as number;
    // A size no allocator could be asked for (a damaged or crafted file) is counted and left out.
    if ((action === A.alloc || action === A.oom) && !isPossibleSize(size)) {
      skippedEvents++;
      continue;
    }
    const releasing = action === A.segment_free || action === A.segment_unmap;
    // A run of segment releases outside an allocation is empty_cache (or the cache release of a failed
    // cudaMalloc, which frees the same unsplit segments).
    if (releasing && !inRelease) {
      sim.emptyCache();
      emptyCacheCalls++;
    }
    inRelease = releasing;
    if (action === A.segment_alloc || action === A.segment_map) {
      const expandable = action === A.segment_map;
      const known = expandable && extendsKnown(addr);
      if (expandable) {
        const r = realExpandable.find((x) => addr >= x.base && addr <= x.end);
        if (r) r.end = Math.max(r.end, addr + size);
        else realExpandable.push({ base: addr, end: addr + size });
      }
      pending.push({ address: addr, sizeBytes: size, expandable, known });
    } else if (action === A.alloc) {
      const ok = sim.alloc(i, size, trace.stream[i] as number);
      pending.length = 0;
      if (!ok) {
        failedAllocations++;
        if (firstFailedEvent === null) firstFailedEvent = i;
      }
      if (ok) {
        addressChecks++;
        if (sim.addressOf(i) === addr) addressMatches++;
      }
      idOf.set(addr, i);
    } else if (action === A.free_requested || action === A.free_completed) {
      const id = idOf.get(addr);
      if (id === undefined) {
        if (action === A.free_completed) unknownFrees++;
      } else if (action === A.free_requested) sim.requestFree(id);
      else {
        sim.free(id);
        idOf.delete(addr);
      }
    } else if (action === A.oom) {
      const id = -1 - i;
      const succeeded = sim.alloc(id, roundSize(size, options.settings), trace.stream[i] as number);
      pending.length = 0;
      const capacity = options.capacityBytes ?? Infinity;
      ooms.push({ eventIndex: i, requestBytes: size, succeeded, spareBytes: succeeded && capacity !== Infinity ? capacity - sim.reservedBytes : null });
    }
  }
  return {
    skippedEvents,
    failedAllocations,
    firstFailedEvent,
    seededSegments,
    coversWholeRun: startReservedBytes === 0 && unknownFrees === 0,
    startReservedBytes,
    eventCount: trace.length,
    addressMatches,
    addressChecks,
    unknownFrees,
    emptyCacheCalls,
    peakReservedBytes: sim.peakReservedBytes,
    peakAllocatedBytes: sim.peakAllocatedBytes,
    fragmentationAtPeakBytes: sim.peakReservedBytes - sim.allocatedAtPeakReservedBytes,
    endReservedBytes: sim.reservedBytes,
    endAllocatedBytes: sim.allocatedBytes,
    numAllocRetries: sim.numAllocRetries,
    ooms,
    segments: sim.segments(),
  };
}

/**
 * Device memory the allocator could have had, from the first `oom` entry: the real reserved bytes at that
 * moment plus the `device_free` the entry recorded. Null when the trace has no OOM. Assumes what other
 * processes and the CUDA context held stayed as it was for the whole run.
 */
export function capacityAtOom(trace: TraceColumns, endReservedBytes: number): number | null {
  let reserved = traceStartReserved(trace, endReservedBytes);
  for (let i = 0; i < trace.length; i++) {
    const a = trace.action[i];
    const size = trace.sizeBytes[i] as number;
    if (!isPossibleSize(size)) continue;
    if (a === A.segment_alloc || a === A.segment_map) reserved += size;
    else if (a === A.segment_free || a === A.segment_unmap) reserved -= size;
    else if (a === A.oom) {
      const capacity = reserved + (trace.addr[i] as number);
      return isPossibleSize(capacity) ? capacity : null;
    }
  }
  return null;
}
