/**
 * The largest micro-batch that fits a memory budget, and the gradient-accumulation plan that reaches an
 * effective batch. Memory is linear in the batch within each phase, so the peak is a convex, increasing,
 * piecewise-linear function of it and a bisection over integers finds the exact largest fitting batch.
 */
import { activationModel } from './activations.js';
import { computeModelStates } from './model-states.js';
import { phaseTotals, type Environment, type PhaseTotal } from './estimate.js';
import type { ModelInput, TrainingSetup } from './setup.js';

export interface BatchFit {
  /** Bytes the estimate may use: capacity × (1 − margin). */
  budgetBytes: number;
  capacityBytes: number;
  margin: number;
  /** Largest batch whose peak fits the budget; 0 when even batch 1 does not. */
  maxBatch: number;
  /** Peak at maxBatch (or at batch 1 when nothing fits). */
  peakAtMax: PhaseTotal;
  /** True when the peak does not depend on the batch (activations unknown): maxBatch is then capped. */
  unbounded: boolean;
}

const BATCH_CAP = 1 << 20;

/**
 * Finds the largest batch whose peak ≤ capacity × (1 − margin). Gives up at 2^20 samples, which only happens
 * when activations are unknown (then `unbounded` says so and the result is not a prediction).
 */
export function findMaxBatch(model: ModelInput, setup: TrainingSetup, env: Environment, capacityBytes: number, margin: number): BatchFit {
  const states = computeModelStates(model, setup);
  const act = activationModel(model, setup);
  const budgetBytes = Math.floor(capacityBytes * (1 - margin));
  const peakAt = (b: number): PhaseTotal =>
    phaseTotals(states, act, setup, env, b).reduce((x, y) => (y.totalBytes > x.totalBytes ? y : x));
  const fits = (b: number): boolean => peakAt(b).totalBytes <= budgetBytes;
  if (!fits(1)) return { budgetBytes, capacityBytes, margin, maxBatch: 0, peakAtMax: peakAt(1), unbounded: false };
  if (fits(BATCH_CAP)) return { budgetBytes, capacityBytes, margin, maxBatch: BATCH_CAP, peakAtMax: peakAt(BATCH_CAP), unbounded: true };
  let lo = 1; // fits
  let hi = BATCH_CAP; // does not fit
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return { budgetBytes, capacityBytes, margin, maxBatch: lo, peakAtMax: peakAt(lo), unbounded: false };
}

export interface AccumulationPlan {
  effectiveBatch: number;
  microBatch: number;
  steps: number;
  /** microBatch × steps (× ranks); equals effectiveBatch unless no exact split fits. */
  realisedBatch: number;
}

/**
 * Splits `effectiveBatch` into `steps` micro-batches of at most `maxMicro` on each of `ranks` data-parallel ranks
 * (the effective batch is global: micro × steps × ranks samples per optimizer step): the fewest steps,
 * preferring an exact split when one exists within twice the minimum step count.
 */
export function planAccumulation(effectiveBatch: number, maxMicro: number, ranks = 1): AccumulationPlan | null {
  if (maxMicro < 1 || effectiveBatch < 1 || ranks < 1) return null;
  const perRank = effectiveBatch / ranks;
  const minSteps = Math.max(1, Math.ceil(perRank / maxMicro));
  for (let steps = minSteps; steps <= 2 * minSteps; steps++) {
    if (effectiveBatch % (steps * ranks) === 0 && effectiveBatch / (steps * ranks) <= maxMicro) {
      return { effectiveBatch, microBatch: effectiveBatch / (steps * ranks), steps, realisedBatch: effectiveBatch };
    }
  }
  const micro = Math.ceil(perRank / minSteps);
  return { effectiveBatch, microBatch: micro, steps: minSteps, realisedBatch: micro * minSteps * ranks };
}

/**
 * Max batch and accumulation for an effective batch. When accumulation is needed the gradients stay alive
 * through the forward pass, which can lower the max batch, so the fit is redone with that setting.
 */
export function fitWithAccumulation(
  model: ModelInput,
  setup: TrainingSetup,
  env: Environment,
  capacityBytes: number,
  margin: number,
  effectiveBatch: number | null,
): { fit: BatchFit; plan: AccumulationPlan | null } {
  const single = findMaxBatch(model, { ...setup, accumulation: 1 }, env, capacityBytes, margin);
  if (effectiveBatch === null || single.maxBatch >= effectiveBatch) {
    return { fit: single, plan: effectiveBatch === null ? null : planAccumulation(effectiveBatch, effectiveBatch) };
  }
  const accumulated = findMaxBatch(model, { ...setup, accumulation: 2 }, env, capacityBytes, margin);
  return { fit: accumulated, plan: planAccumulation(effectiveBatch, accumulated.maxBatch) };
}
