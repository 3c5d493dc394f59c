/**
 * Step timing of one process, from the companion's cumulative `steps` message: the mean step, the share of
 * it spent waiting for the next batch, samples per second, the batch size seen against the one asked, and the
 * two findings drawn from them (input-bound, batch override).
 */
import type { RunFinding } from '../run/utilization.js';
import { formatPercent } from '../units.js';
import type { StepsMessage } from './messages.js';

/** What the run report keeps per process (`plugins.companion.processes[].steps`, docs/companion.md). */
export interface StepSummary {
  steps: number;
  meanStepMs: number | null;
  meanDataWaitMs: number | null;
  /** Data wait over step time, 0..1; null before the first complete step. */
  dataWaitShare: number | null;
  /** Samples per second of step time; null when the batches showed no first dimension. */
  samplesPerSec: number | null;
  batchSeen: number | null;
  batchMin: number | null;
  batchMax: number | null;
  batchAsked: number | null;
}

/** At or above this share of step time spent waiting for data, the run is input-bound. */
export const INPUT_BOUND_SHARE = 0.3;
/** Fewer steps than this say nothing about a training loop (warm-up, a validation pass). */
export const MIN_STEPS = 5;

/** Reduces the cumulative totals to means and shares. */
export function summariseSteps(m: StepsMessage): StepSummary {
  const has = m.steps > 0 && m.stepMs > 0;
  return {
    steps: m.steps,
    meanStepMs: has ? m.stepMs / m.steps : null,
    meanDataWaitMs: has ? m.dataWaitMs / m.steps : null,
    dataWaitShare: has ? m.dataWaitMs / m.stepMs : null,
    // Samples of the completed steps only: the first fetch starts the clock, its batch is in no step.
    samplesPerSec: has && m.batchSeen !== null ? ((m.samples * m.steps) / (m.steps + 1)) / (m.stepMs / 1000) : null,
    batchSeen: m.batchSeen, batchMin: m.batchMin, batchMax: m.batchMax, batchAsked: m.batchAsked,
  };
}

/** Input-bound: the loop waited for data at least INPUT_BOUND_SHARE of step time over at least MIN_STEPS steps. */
export function inputBoundFinding(pid: number, s: StepSummary): RunFinding | null {
  if (s.steps < MIN_STEPS || s.dataWaitShare === null || s.dataWaitShare < INPUT_BOUND_SHARE) return null;
  return {
    id: 'input-bound',
    gpuIndex: null,
    title: `pid ${pid} is input-bound: the loop waited for data ${formatPercent(s.dataWaitShare * 100)} of step time ` +
      `(${(s.meanDataWaitMs ?? 0).toFixed(1)} ms of ${(s.meanStepMs ?? 0).toFixed(1)} ms per step over ${s.steps} steps)`,
    fix: 'raise DataLoader num_workers (up to the free cores), pin_memory=True, persistent_workers=True, a larger prefetch_factor, ' +
      'and move decoding and augmentation out of __getitem__ or onto the GPU',
    details: { pid, steps: s.steps, dataWaitShare: s.dataWaitShare, meanStepMs: s.meanStepMs, meanDataWaitMs: s.meanDataWaitMs },
  };
}

/** Batch override: `--batch` asked for one size and the loop's batches had another (the last, smaller batch aside). */
export function batchOverrideFinding(pid: number, s: StepSummary): RunFinding | null {
  if (s.batchAsked === null || s.batchSeen === null || s.batchSeen === s.batchAsked) return null;
  return {
    id: 'batch-override',
    gpuIndex: null,
    title: `pid ${pid}: batch size asked ${s.batchAsked}, used ${s.batchSeen}`,
    fix: 'the program sets its own batch size: read it from {batch} or the GPUMEM_BATCH variable instead of a fixed value or a config default',
    details: { pid, batchAsked: s.batchAsked, batchSeen: s.batchSeen, batchMin: s.batchMin, batchMax: s.batchMax },
  };
}
