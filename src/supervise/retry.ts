/**
 * OOM retry arithmetic. After an out-of-memory failure the batch is halved and gradient accumulation
 * doubled, so batch × accum (the effective batch the optimizer sees) stays the same whenever the batch is
 * even; an odd batch rounds down and the report says the effective batch changed. Batch 1 cannot shrink
 * further, so retrying stops there.
 */
import { GpumemError } from '../core/errors.js';
import type { BatchPlan } from '../core/run/report.js';

export type { BatchPlan };

/** The next attempt's batch and accumulation, or null when the batch is already 1. */
export function nextBatchPlan(current: BatchPlan): BatchPlan | null {
  if (current.batch <= 1) return null;
  return { batch: Math.max(1, Math.floor(current.batch / 2)), accum: current.accum * 2 };
}

/** True when any argument carries a `{batch}` or `{accum}` placeholder. */
export function hasPlaceholders(argv: readonly string[]): { batch: boolean; accum: boolean } {
  return { batch: argv.some((a) => a.includes('{batch}')), accum: argv.some((a) => a.includes('{accum}')) };
}

/** Replaces `{batch}` and `{accum}` in every argument (each occurrence) with the plan's numbers. */
export function substitute(argv: readonly string[], plan: BatchPlan | null): string[] {
  if (!plan) return [...argv];
  return argv.map((a) => a.replaceAll('{batch}', String(plan.batch)).replaceAll('{accum}', String(plan.accum)));
}

/**
 * Checks the batch options against the command: placeholders need a starting batch, and batch/accum must
 * be positive integers. Returns the plan (null when the run has no batch at all).
 */
export function initialBatchPlan(argv: readonly string[], batch: number | undefined, accum: number | undefined): BatchPlan | null {
  const uses = hasPlaceholders(argv);
  for (const [name, value] of [['--batch', batch], ['--accum', accum]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new GpumemError('BAD_OPTION_VALUE', `${name}: "${value}" is not a positive whole number`, { hint: `e.g. ${name} 8` });
    }
  }
  if ((uses.batch || uses.accum) && batch === undefined) {
    throw new GpumemError('USAGE', 'the command uses {batch}/{accum} but no starting batch was given', {
      hint: 'add --batch N (and optionally --accum N, default 1)',
    });
  }
  if (batch === undefined) return null;
  return { batch, accum: accum ?? 1 };
}
