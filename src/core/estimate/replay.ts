/**
 * Replays a traced training step: live bytes event by event, the peak and what is alive at it (by phase,
 * module and category), a timeline, and — through a caching-allocator model when one is given — the peak
 * the allocator would reserve. cuBLAS's workspace is injected at the first matrix multiply because on CUDA
 * it comes from the caching allocator there (CublasHandlePool.cpp) while the CPU trace has no such buffer.
 */
import type { StepTrace, TraceAlloc, TracePhase } from './trace.js';

/** The caching-allocator operations the replay needs (core/allocator's simulator provides them). */
export interface AllocatorModel {
  /** false when the request would run out of memory. */
  alloc(id: number, sizeBytes: number): boolean;
  free(id: number): void;
  stats(): { peakAllocatedBytes: number; peakReservedBytes: number; numAllocRetries: number; numOoms: number; segmentCount: number };
}

export type ReplayCategory = 'weights' | 'gradients' | 'optimizer-state' | 'activations' | 'temporaries' | 'workspace';

export interface ReplayOptions {
  workspaceBytes: number;
  /** Samples in the timeline (each the largest live total of its slice of events). */
  timelinePoints?: number;
}

export interface ReplayResult {
  /** Sum of live requested bytes at the peak (what the program asked for, before allocator rounding). */
  peakRequestedBytes: number;
  peakPhase: TracePhase;
  peakStep: number;
  peakByCategory: Record<ReplayCategory, number>;
  /** The 12 largest module (or backward-op) groups alive at the peak. */
  peakByModule: Array<{ module: string; bytes: number }>;
  /** Highest live requested bytes reached inside each phase. */
  phasePeaks: Array<{ phase: TracePhase; peakRequestedBytes: number }>;
  timelineBytes: number[];
  allocator: null | { peakAllocatedBytes: number; peakReservedBytes: number; numAllocRetries: number; numOoms: number; segmentCount: number };
  allocations: number;
}

const MATMUL_OPS: ReadonlySet<string> = new Set(['mm', 'addmm', 'bmm', 'baddbmm', 'matmul', '_scaled_mm', 'addbmm']);
const WORKSPACE_ID = -1;

function categoryOf(a: TraceAlloc, tagged: Map<number, ReplayCategory>, backwardStarted: Set<number>): ReplayCategory {
  const tag = tagged.get(a.id);
  if (tag) return tag;
  // A forward output still alive once backward began was saved for backward.
  if (a.phase === 'forward' && backwardStarted.has(a.id)) return 'activations';
  return 'temporaries';
}

export interface TraceWalk {
  live: Map<number, TraceAlloc>;
  aliveAtBackward: Set<number>;
  series: number[];
  phasePeak: Map<TracePhase, number>;
  peak: number;
  peakIndex: number;
  peakAt: TraceAlloc | null;
  allocations: number;
}

/** Called after every allocation and free with the live bytes and the phase and step of the latest allocation. */
export type WalkProbe = (liveBytes: number, phase: TracePhase, step: number) => void;

/**
 * Walks the events in order (stopping after the `stopAt`-th allocation when given), feeding `allocator`
 * and, when given, `probe` after each event.
 */
export function walkTrace(trace: StepTrace, workspaceBytes: number, allocator: AllocatorModel | null, stopAt: number, probe?: WalkProbe): TraceWalk {
  const w: TraceWalk = { live: new Map(), aliveAtBackward: new Set(), series: [], phasePeak: new Map(), peak: -1, peakIndex: -1, peakAt: null, allocations: 0 };
  let liveBytes = 0;
  let workspaceDone = workspaceBytes <= 0;
  let lastPhase: TracePhase = 'other';
  let lastStep = 0;
  const add = (a: TraceAlloc): boolean => {
    w.live.set(a.id, a);
    liveBytes += a.bytes;
    w.allocations++;
    allocator?.alloc(a.id, a.bytes);
    if (a.phase === 'backward' && lastPhase !== 'backward') for (const [id, b] of w.live) if (b.phase === 'forward') w.aliveAtBackward.add(id);
    lastPhase = a.phase;
    lastStep = a.step;
    w.phasePeak.set(a.phase, Math.max(w.phasePeak.get(a.phase) ?? 0, liveBytes));
    if (liveBytes > w.peak) {
      w.peak = liveBytes;
      w.peakIndex = w.allocations;
      w.peakAt = a;
    }
    w.series.push(liveBytes);
    probe?.(liveBytes, lastPhase, lastStep);
    return w.allocations === stopAt;
  };
  for (const ev of trace.events) {
    if (ev.kind === 'alloc') {
      if (!workspaceDone && MATMUL_OPS.has(ev.op)) {
        workspaceDone = true;
        if (add({ ...ev, id: WORKSPACE_ID, bytes: workspaceBytes, op: 'cublas-workspace', module: 'cuBLAS workspace', dtype: 'uint8' })) break;
      }
      if (add(ev)) break;
    } else if (ev.kind === 'free') {
      const a = w.live.get(ev.id);
      if (!a) continue;
      w.live.delete(ev.id);
      liveBytes -= a.bytes;
      allocator?.free(ev.id);
      w.series.push(liveBytes);
      probe?.(liveBytes, lastPhase, lastStep);
    }
  }
  return w;
}

/** Replays `trace` (alloc/free order as the program ran) and reports its peak and timeline. */
export function replayStepTrace(trace: StepTrace, options: ReplayOptions, allocator: AllocatorModel | null = null): ReplayResult {
  const tagged = new Map<number, ReplayCategory>();
  for (const ev of trace.events) if (ev.kind === 'tag') for (const id of ev.ids) tagged.set(id, ev.category);
  const full = walkTrace(trace, options.workspaceBytes, allocator, -1);
  // Second, partial walk: the live set at the peak, without copying it at every new high.
  const atPeak = walkTrace(trace, options.workspaceBytes, null, full.peakIndex);

  const byCategory: Record<ReplayCategory, number> = { weights: 0, gradients: 0, 'optimizer-state': 0, activations: 0, temporaries: 0, workspace: 0 };
  const byModule = new Map<string, number>();
  for (const a of atPeak.live.values()) {
    const cat = a.id === WORKSPACE_ID ? 'workspace' : categoryOf(a, tagged, full.aliveAtBackward);
    byCategory[cat] += a.bytes;
    const key = cat === 'weights' || cat === 'gradients' || cat === 'optimizer-state' ? `(${cat})` : (a.module ?? '(outside any module)');
    byModule.set(key, (byModule.get(key) ?? 0) + a.bytes);
  }
  return {
    peakRequestedBytes: Math.max(full.peak, 0),
    peakPhase: full.peakAt?.phase ?? 'other',
    peakStep: full.peakAt?.step ?? 0,
    peakByCategory: byCategory,
    peakByModule: [...byModule].sort((x, y) => y[1] - x[1]).slice(0, 12).map(([module, bytes]) => ({ module, bytes })),
    phasePeaks: (['forward', 'backward', 'optimizer', 'other'] as const)
      .filter((p) => full.phasePeak.has(p))
      .map((p) => ({ phase: p, peakRequestedBytes: full.phasePeak.get(p)! })),
    timelineBytes: downsampleMax(full.series, options.timelinePoints ?? 60),
    allocator: allocator ? { ...allocator.stats() } : null,
    allocations: full.allocations,
  };
}

/** `points` values, each the maximum of its slice of `series` (so no peak is lost). */
export function downsampleMax(series: readonly number[], points: number): number[] {
  if (series.length <= points) return [...series];
  const out: number[] = [];
  for (let i = 0; i < points; i++) {
    const from = Math.floor((i * series.length) / points);
    const to = Math.floor(((i + 1) * series.length) / points);
    let m = 0;
    for (let j = from; j < to; j++) m = Math.max(m, series[j]!);
    out.push(m);
  }
  return out;
}

const BARS = '▁▂▃▄▅▆▇█';

/** A one-line sparkline of `values` scaled to their maximum. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  if (max === 0) return BARS[0]!.repeat(values.length);
  return values.map((v) => BARS[Math.min(BARS.length - 1, Math.floor((v / max) * (BARS.length - 1) + 0.5))]).join('');
}
