/**
 * The `gpumem fit --json` document (schema in docs/fit.md; bump FIT_SCHEMA_VERSION on incompatible changes).
 */
import { planAccumulation, type AccumulationPlan } from '../estimate/batch.js';
import type { FitResult } from './planner.js';

export const FIT_SCHEMA_VERSION = 1;

export interface FitReport extends FitResult {
  schemaVersion: typeof FIT_SCHEMA_VERSION;
  argv: string[];
  steps: number;
  /** Free memory of the GPU at start and the share of it targeted. */
  freeBytesAtStart: number;
  targetFill: number;
  accumulation: AccumulationPlan | null;
  /** The fitted slope: pass it to `gpumem estimate --activation-bytes-per-sample`. */
  measuredBytesPerSample: number | null;
}

/** Wraps a planner result with the run's context and the accumulation for `effectiveBatch`. */
export function buildFitReport(
  result: FitResult,
  context: { argv: string[]; steps: number; freeBytesAtStart: number; targetFill: number; effectiveBatch: number | null },
): FitReport {
  const accumulation =
    context.effectiveBatch !== null && result.batch !== null ? planAccumulation(context.effectiveBatch, result.batch) : null;
  return {
    schemaVersion: FIT_SCHEMA_VERSION,
    argv: context.argv,
    steps: context.steps,
    freeBytesAtStart: context.freeBytesAtStart,
    targetFill: context.targetFill,
    ...result,
    accumulation,
    measuredBytesPerSample: result.line ? result.line.perSampleBytes : null,
  };
}
