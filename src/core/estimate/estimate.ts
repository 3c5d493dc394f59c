/**
 * Puts the pieces together: model states + activations + transients + context, per training phase, and the
 * peak over phases. Ordering follows a PyTorch step (reference §4.1, §7.3): activations grow through the
 * forward pass; at the start of backward the logits' gradient joins them; gradients then replace
 * activations layer by layer (linear trends, so the extremes are at the two ends); at optimizer.step()
 * gradients, states and the step's temporaries coexist. Optimizer states appear at the first step and
 * persist, so the steady-state iteration (≥ 2) is what this models.
 */
import { activationModel, type ActivationModel } from './activations.js';
import { DEFAULT_FRAGMENTATION } from './allocator.js';
import { computeModelStates, type ModelStates } from './model-states.js';
import type { ModelInput, TrainingSetup } from './setup.js';

export type Phase = 'forward-end' | 'backward' | 'optimizer-step';

export interface Breakdown {
  weightsBytes: number;
  gradientsBytes: number;
  optimizerStatesBytes: number;
  emaBytes: number;
  activationsBytes: number;
  transientsBytes: number;
  contextBytes: number;
  workspaceBytes: number;
  allocatorSlackBytes: number;
}

export interface PhaseTotal {
  phase: Phase;
  totalBytes: number;
  breakdown: Breakdown;
}

export interface Environment {
  /** CUDA context + kernels (per process). */
  contextBytes: number;
  /** cuBLAS workspace. */
  workspaceBytes: number;
  /** Share of batch-dependent bytes lost to allocator fragmentation. */
  fragmentation: number;
}

export interface MemoryEstimate {
  batch: number;
  states: ModelStates;
  activations: ActivationModel;
  phases: PhaseTotal[];
  peak: PhaseTotal;
}

/** Environment defaults when no GPU is named: 512 MiB context, 8.125 MiB workspace, 5 % fragmentation. */
export const DEFAULT_ENVIRONMENT: Environment = {
  contextBytes: 512 * 1024 * 1024,
  workspaceBytes: 8 * 1024 * 1024 + 128 * 1024,
  fragmentation: DEFAULT_FRAGMENTATION,
};

/** Estimates every phase's total for `setup` at `setup.batch` and returns them with the peak. */
export function estimateMemory(model: ModelInput, setup: TrainingSetup, env: Environment = DEFAULT_ENVIRONMENT): MemoryEstimate {
  const states = computeModelStates(model, setup);
  const activations = activationModel(model, setup);
  const phases = phaseTotals(states, activations, setup, env, setup.batch);
  const peak = phases.reduce((a, b) => (b.totalBytes > a.totalBytes ? b : a));
  return { batch: setup.batch, states, activations, phases, peak };
}

/**
 * Phase totals for one micro-batch size. Split out so the max-batch search can evaluate many batch sizes
 * without recomputing model states.
 */
export function phaseTotals(
  states: ModelStates,
  act: ActivationModel,
  setup: TrainingSetup,
  env: Environment,
  batch: number,
): PhaseTotal[] {
  const saved = act.savedBytesPerSample * batch;
  const layerWork = act.layerWorkingBytesPerSample * batch;
  const outGrad = act.outputGradBytesPerSample * batch;
  // With accumulation the gradients live across micro-steps, and zero_grad(set_to_none=False) keeps them
  // allocated (zeroed) into the next step: either way they are present in the forward pass too.
  const gradsEarly = setup.accumulation > 1 || setup.keepGrads ? states.gradientsBytes : 0;
  const base = {
    weightsBytes: states.weightsBytes,
    optimizerStatesBytes: states.optimizerStatesBytes,
    emaBytes: states.emaBytes,
    contextBytes: env.contextBytes,
    workspaceBytes: env.workspaceBytes,
  };
  // A measured per-sample slope of the peak already includes the slack that grows with its bytes.
  const fragmenting = (activations: number): number => (act.slopeOfPeak ? 0 : activations);
  const make = (phase: Phase, gradients: number, activations: number, transients: number): PhaseTotal => {
    const allocatorSlackBytes = states.roundingSlackBytes + Math.round(env.fragmentation * (fragmenting(activations) + transients));
    const breakdown: Breakdown = { ...base, gradientsBytes: gradients, activationsBytes: activations, transientsBytes: transients, allocatorSlackBytes };
    const totalBytes = Object.values(breakdown).reduce((a, b) => a + b, 0);
    return { phase, totalBytes, breakdown };
  };
  const forwardTransients = states.autocastCopyBytes + states.gatheredForwardBytes;
  const forwardEnd = make('forward-end', gradsEarly, saved, forwardTransients);
  const backwardStart = make('backward', gradsEarly, saved, states.autocastCopyBytes + states.gatheredBackwardBytes + outGrad + layerWork);
  const backwardEnd = make('backward', states.gradientsBytes, 0, states.gatheredBackwardBytes + layerWork);
  const backward = backwardEnd.totalBytes > backwardStart.totalBytes ? backwardEnd : backwardStart;
  const step = make('optimizer-step', states.gradientsBytes, 0, states.stepTransientBytes);
  return [forwardEnd, backward, step];
}
