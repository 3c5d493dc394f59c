/**
 * The OOM forecast of one process on one device, from its per-step memory history: memory that grows step
 * after step (its rate, and the step at which the loop's peak reaches the limit at that rate), and spikes that
 * come back every N steps (the next one's step, what it will need, and whether that fits). Pure: the caller
 * gives the limit (what PyTorch in this process may still reach: its reserved bytes plus the GPU's free bytes).
 */
import { isSpike, keptSteps, WARMUP_STEPS, type SpikeEvent, type StepMemoryHistory, type StepMemoryRecord } from './history.js';

/** Steady growth of what each step leaves behind. */
export interface MemoryGrowth {
  /** Least-squares slope of the bytes left allocated at each step's end, over the steps from `sinceStep`. */
  bytesPerStep: number;
  sinceStep: number;
  /** Bytes grown over those steps, by the fitted line. */
  grownBytes: number;
  /** How well a straight line fits (0..1): a leak is a line; noise is not. */
  r2: number;
  /**
   * What grows: the allocation sites whose live bytes rose between two allocator snapshots (only when allocation
   * history is recorded: `gpumem run --snapshot-on-oom`); null otherwise. Filled in by the caller from the
   * companion's `sites` message.
   */
  sites?: { fromStep: number; toStep: number; leftGrewBytes: number; sites: Array<{ site: string; bytes: number; blocks: number }> } | null;
  /** The step at which the usual step's peak reaches the limit at this rate; null without a limit. */
  oomAtStep: number | null;
  /** `oomAtStep` minus the latest step. */
  stepsLeft: number | null;
}

/** Spikes that recur every `everySteps` steps (an evaluation, a checkpoint). */
export interface PeriodicSpikes {
  everySteps: number;
  /** How many such spikes were seen. */
  seen: number;
  lastStep: number;
  nextStep: number;
  /** The highest allocated peak of the spikes seen. */
  peakBytes: number;
  /** What the next one should reach: `peakBytes` plus the growth until then. */
  nextPeakBytes: number;
  /** Limit minus `nextPeakBytes` (negative: it will not fit); null without a limit. */
  headroomBytes: number | null;
  /** The first spike, from the next on, that growth will push over the limit, and its peak; null when none will. */
  failsAtStep: number | null;
  failsAtPeakBytes: number | null;
}

export interface MemoryForecast {
  device: number;
  boundary: StepMemoryHistory['boundary'];
  /** The latest step recorded. */
  step: number;
  /** What the latest step left allocated. */
  leftBytes: number;
  /** The usual step's allocated peak (the latest step that was no spike). */
  usualPeakBytes: number | null;
  maxPeakAllocatedBytes: number;
  maxPeakReservedBytes: number;
  /** What the forecast measured against (see the module comment); null when not known. */
  limitBytes: number | null;
  growth: MemoryGrowth | null;
  spikes: PeriodicSpikes | null;
  /** Why the run is expected to fail: growth reaching the limit within `withinSteps`, or the next spike not fitting. */
  warnings: Array<'growth' | 'spike'>;
}

export interface ForecastOptions {
  limitBytes: number | null;
  /** Warn when growth reaches the limit within this many steps (default 1000). */
  withinSteps?: number;
  /** Warn when the next periodic spike will not fit, or a later one within `withinSteps` (default true). */
  checkSpikes?: boolean;
}

/** Fewer steps than this after warm-up say nothing about growth. */
export const MIN_GROWTH_STEPS = 20;
/** Growth smaller than this over the fitted steps is noise, not a leak. */
export const MIN_GROWN_BYTES = 1024 * 1024;
/** A line must explain this share of the variance for the growth to be called steady. */
export const MIN_R2 = 0.8;

function fitLine(points: readonly StepMemoryRecord[]): { slope: number; r2: number } {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.step, 0) / n;
  const my = points.reduce((a, p) => a + p.leftBytes, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (const p of points) {
    sxx += (p.step - mx) ** 2;
    sxy += (p.step - mx) * (p.leftBytes - my);
    syy += (p.leftBytes - my) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  // A perfectly flat run has no variance at all: nothing grows, and the fit is not asked to explain anything.
  const r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
  return { slope, r2 };
}

/** Steps of the loop proper: past warm-up, in the later half of the run (a leak that began late is not diluted), no spikes. */
function growthWindow(h: StepMemoryHistory): StepMemoryRecord[] {
  const from = Math.max(WARMUP_STEPS, Math.floor(h.lastStep / 2));
  const inSpike = (s: number): boolean => h.spikes.some((e) => s >= e.firstStep && s <= e.lastStep);
  return keptSteps(h).filter((r) => r.step > from && !inSpike(r.step));
}

function growthOf(h: StepMemoryHistory, limit: number | null): MemoryGrowth | null {
  const points = growthWindow(h);
  if (points.length < MIN_GROWTH_STEPS) return null;
  const { slope, r2 } = fitLine(points);
  const first = points[0] as StepMemoryRecord;
  const last = points[points.length - 1] as StepMemoryRecord;
  const grown = slope * (last.step - first.step);
  const quarter = Math.max(1, Math.floor(points.length / 4));
  const mean = (xs: StepMemoryRecord[]): number => xs.reduce((a, p) => a + p.leftBytes, 0) / xs.length;
  const rose = mean(points.slice(-quarter)) > mean(points.slice(0, quarter));
  if (slope <= 0 || r2 < MIN_R2 || grown < MIN_GROWN_BYTES || !rose) return null;
  const usual = h.usualPeakBytes ?? last.peakAllocatedBytes;
  const stepsLeft = limit === null ? null : Math.max(0, Math.ceil((limit - usual) / slope));
  return {
    bytesPerStep: slope, sinceStep: first.step, grownBytes: Math.round(grown), r2,
    oomAtStep: stepsLeft === null ? null : h.lastStep + stepsLeft, stepsLeft,
  };
}

/** The spacing of the latest spikes when it is regular (within one step or 2 %), else null. */
function periodOf(events: readonly SpikeEvent[]): number | null {
  const starts = events.slice(-5).map((e) => e.firstStep);
  if (starts.length < 2) return null;
  const gaps = starts.slice(1).map((s, i) => s - (starts[i] as number));
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  const tolerance = Math.max(1, Math.round(0.02 * median));
  return gaps.every((g) => Math.abs(g - median) <= tolerance) ? median : null;
}

function spikesOf(h: StepMemoryHistory, growth: MemoryGrowth | null, limit: number | null): PeriodicSpikes | null {
  const every = periodOf(h.spikes);
  if (every === null) return null;
  const recent = h.spikes.slice(-5);
  const last = recent[recent.length - 1] as SpikeEvent;
  // The spike is still due when the latest step is a usual one again: a spike as tall now would stand out too.
  const usual = h.usualPeakBytes;
  let next = last.firstStep + every;
  while (next <= h.lastStep) next += every;
  const peak = Math.max(...recent.map((e) => e.peakAllocatedBytes));
  const rate = growth ? growth.bytesPerStep : 0;
  const peakAt = (step: number): number => Math.round(peak + rate * (step - last.firstStep));
  const nextPeak = peakAt(next);
  if (usual !== null && !isSpike(nextPeak, usual)) return null;
  let failsAt: number | null = null;
  if (limit !== null && (nextPeak > limit || rate > 0)) {
    // Straight to the spike where the line crosses the limit, then settle the rounding by single periods.
    failsAt = nextPeak > limit ? next : next + Math.max(0, Math.ceil((last.firstStep + (limit - peak) / rate - next) / every)) * every;
    while (peakAt(failsAt) <= limit) failsAt += every;
    while (failsAt - every >= next && peakAt(failsAt - every) > limit) failsAt -= every;
  }
  return {
    everySteps: every, seen: recent.length, lastStep: last.firstStep, nextStep: next, peakBytes: peak, nextPeakBytes: nextPeak,
    headroomBytes: limit === null ? null : limit - nextPeak, failsAtStep: failsAt, failsAtPeakBytes: failsAt === null ? null : peakAt(failsAt),
  };
}

/** The forecast for one history; null before any step was recorded. */
export function forecastMemory(h: StepMemoryHistory, options: ForecastOptions): MemoryForecast | null {
  const latest = h.recent[h.recent.length - 1];
  if (!latest) return null;
  const limit = options.limitBytes;
  const growth = growthOf(h, limit);
  const spikes = spikesOf(h, growth, limit);
  const warnings: MemoryForecast['warnings'] = [];
  if (growth?.stepsLeft !== null && growth?.stepsLeft !== undefined && growth.stepsLeft <= (options.withinSteps ?? 1000)) warnings.push('growth');
  // The next spike not fitting, or a later one that growth pushes over the limit within the window.
  const within = options.withinSteps ?? 1000;
  const failsAt = spikes?.failsAtStep ?? null;
  if ((options.checkSpikes ?? true) && failsAt !== null && (failsAt === spikes?.nextStep || failsAt - h.lastStep <= within)) warnings.push('spike');
  return {
    device: h.device, boundary: h.boundary, step: h.lastStep, leftBytes: latest.leftBytes, usualPeakBytes: h.usualPeakBytes,
    maxPeakAllocatedBytes: h.maxPeakAllocatedBytes, maxPeakReservedBytes: h.maxPeakReservedBytes, limitBytes: limit, growth, spikes, warnings,
  };
}
