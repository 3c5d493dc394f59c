/**
 * The memory timeline of a traced step for the `--html` page: requested bytes (what the tensors asked for)
 * and, through the caching-allocator model, allocated (rounded blocks) and reserved (segments) after every
 * event, cut into slices that each keep their maximum, so no peak falls between two points.
 */
import type { AllocatorModel } from './replay.js';
import { walkTrace } from './replay.js';
import type { StepTrace, TracePhase } from './trace.js';

/** An allocator model that also says what it holds now (core/allocator's simulator does). */
export interface TimelineAllocator extends AllocatorModel {
  stats(): ReturnType<AllocatorModel['stats']> & { allocatedBytes: number; reservedBytes: number };
}

export interface TimelinePoint {
  /** First event of the slice (0-based, allocations and frees counted together). */
  eventIndex: number;
  requestedBytes: number;
  allocatedBytes: number | null;
  reservedBytes: number | null;
  /** Phase and step of the allocation latest at the slice's highest requested bytes. */
  phase: TracePhase;
  step: number;
}

export interface TraceTimeline {
  events: number;
  points: TimelinePoint[];
  /** The point holding the peak of requested bytes (the replay's peak). */
  peakPoint: number;
  peakRequestedBytes: number;
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
}

interface Sample {
  requested: number;
  allocated: number | null;
  reserved: number | null;
  phase: TracePhase;
  step: number;
}

/** Replays `trace` through `allocator` (null: requested bytes only) and returns at most `points` slices. */
export function traceTimeline(trace: StepTrace, workspaceBytes: number, allocator: TimelineAllocator | null, points = 480): TraceTimeline {
  const samples: Sample[] = [];
  walkTrace(trace, workspaceBytes, allocator, -1, (requested, phase, step) => {
    const now = allocator?.stats();
    samples.push({ requested, allocated: now ? now.allocatedBytes : null, reserved: now ? now.reservedBytes : null, phase, step });
  });
  const slices = Math.max(1, Math.min(points, samples.length));
  const out: TimelinePoint[] = [];
  let peakPoint = 0;
  for (let i = 0; i < slices && samples.length > 0; i++) {
    const from = Math.floor((i * samples.length) / slices);
    const to = Math.max(from + 1, Math.floor(((i + 1) * samples.length) / slices));
    let top = samples[from]!;
    let allocated = top.allocated;
    let reserved = top.reserved;
    for (let j = from; j < to; j++) {
      const s = samples[j]!;
      if (s.requested > top.requested) top = s;
      if (s.allocated !== null) allocated = Math.max(allocated ?? 0, s.allocated);
      if (s.reserved !== null) reserved = Math.max(reserved ?? 0, s.reserved);
    }
    out.push({ eventIndex: from, requestedBytes: top.requested, allocatedBytes: allocated, reservedBytes: reserved, phase: top.phase, step: top.step });
    if (top.requested > out[peakPoint]!.requestedBytes) peakPoint = out.length - 1;
  }
  const stats = allocator?.stats() ?? null;
  return {
    events: samples.length,
    points: out,
    peakPoint,
    peakRequestedBytes: out.reduce((m, p) => Math.max(m, p.requestedBytes), 0),
    peakAllocatedBytes: stats ? stats.peakAllocatedBytes : null,
    peakReservedBytes: stats ? stats.peakReservedBytes : null,
  };
}
