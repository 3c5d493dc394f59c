/**
 * The `gpumem fit --json` document (schema in docs/fit.md; bump FIT_SCHEMA_VERSION on incompatible changes).
 */
import { planAccumulation, type AccumulationPlan } from '../estimate/batch.js';
import type { FitResult } from './planner.js';

// 2: worldSize, gpus and each run's perGpuPeakBytes (fit --world-size); accumulation keeps the global batch.
export const FIT_SCHEMA_VERSION = 2;

/** A GPU the ranks run on (one per rank, in rank order). */
export interface FitGpu {
  index: number;
  uuid: string | null;
  freeBytesAtStart: number;
  /** targetFill of its free memory: a run fits when this GPU's peak stays under it. */
  targetBytes: number;
}

export interface FitReport extends Omit<FitResult, 'runs'> {
  schemaVersion: typeof FIT_SCHEMA_VERSION;
  argv: string[];
  steps: number;
  /** Free memory of the GPU at start and the share of it targeted. */
  freeBytesAtStart: number;
  targetFill: number;
  accumulation: AccumulationPlan | null;
  /** The fitted slope: pass it to `gpumem estimate --activation-bytes-per-sample`. */
  measuredBytesPerSample: number | null;
  /** Ranks per run; with more than one, the batch is per rank and `peakBytes` the worst GPU's (see docs/fit.md). */
  worldSize: number;
  gpus: FitGpu[];
  runs: Array<FitResult['runs'][number] & { perGpuPeakBytes: Array<number | null> }>;
}

/** Wraps a planner result with the run's context and the accumulation for `effectiveBatch`. */
export function buildFitReport(
  result: FitResult,
  context: {
    argv: string[]; steps: number; freeBytesAtStart: number; targetFill: number; effectiveBatch: number | null;
    worldSize: number; gpus: FitGpu[]; perGpuPeaks: ReadonlyMap<number, Array<number | null>>;
  },
): FitReport {
  // The effective batch is global: every rank contributes micro-batch × steps samples to each optimizer step.
  const accumulation =
    context.effectiveBatch !== null && result.batch !== null ? planAccumulation(context.effectiveBatch, result.batch, context.worldSize) : null;
  return {
    schemaVersion: FIT_SCHEMA_VERSION,
    argv: context.argv,
    steps: context.steps,
    freeBytesAtStart: context.freeBytesAtStart,
    targetFill: context.targetFill,
    ...result,
    runs: result.runs.map((r) => ({ ...r, perGpuPeakBytes: context.perGpuPeaks.get(r.batch) ?? context.gpus.map(() => null) })),
    accumulation,
    measuredBytesPerSample: result.line ? result.line.perSampleBytes : null,
    worldSize: context.worldSize,
    gpus: context.gpus,
  };
}
