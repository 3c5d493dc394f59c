/**
 * What the config-only estimate assumes, in words the output prints, and the range its one large guess (the
 * CUDA context) spans. The context figures are public reports (docs/estimate.md, "CUDA context"): with lazy
 * module loading (PyTorch's default since 1.13, CUDA's since 12.2) 256 MiB bare on an RTX 3090 to about
 * 640 MiB after training steps on newer GPUs; eager loading (CUDA_MODULE_LOADING=EAGER, CUDA before 11.7)
 * took over 1 GiB.
 */
import { MiB } from '../units.js';
import type { Environment } from './estimate.js';
import type { TrainingSetup } from './setup.js';

export const CONTEXT_LOW_BYTES = 256 * MiB;
export const CONTEXT_HIGH_BYTES = 640 * MiB;

export interface ConfigAssumptions {
  assumptions: string[];
  /** The peak with the context at its low and high reported sizes (only the context is varied). */
  peakRangeBytes: { lowBytes: number; highBytes: number };
}

/**
 * The assumptions behind a config-only estimate of `setup`, and the peak's range when the context is a
 * default rather than given (`contextGiven`: --context was passed, so the range collapses to the peak).
 */
export function configAssumptions(setup: TrainingSetup, env: Environment, peakBytes: number, contextGiven: boolean): ConfigAssumptions {
  const a: string[] = [];
  if (setup.precision === 'amp-bf16' || setup.precision === 'amp-fp16') {
    a.push('autocast: the logits, their log-softmax and gradient and RMSNorm outputs are counted in float32; other ops autocast keeps in float32 (LayerNorm, a float32 residual stream) are counted at 16 bits, so the activations may be low');
  }
  a.push('the loss over the vocabulary materialises float32 logits and their gradient at the start of backward');
  a.push(
    setup.accumulation > 1
      ? 'gradients live from the first micro-batch to the optimizer step (accumulation)'
      : 'gradients are freed after each step (zero_grad(set_to_none=True), the default); with set_to_none=False they also stay through the forward pass (as with --effective-batch accumulation)',
  );
  a.push('optimizer state counted as it is after the first step (it is created lazily there, so step 1 peaks higher than step 0)');
  if (!contextGiven) {
    a.push(`CUDA context ${Math.round(env.contextBytes / MiB)} MiB assumed (lazy module loading); reports span ${CONTEXT_LOW_BYTES / MiB}–${CONTEXT_HIGH_BYTES / MiB} MiB, over 1 GiB with eager loading — give --context to replace`);
  }
  const low = contextGiven ? peakBytes : peakBytes - env.contextBytes + Math.min(CONTEXT_LOW_BYTES, env.contextBytes);
  const high = contextGiven ? peakBytes : peakBytes - env.contextBytes + Math.max(CONTEXT_HIGH_BYTES, env.contextBytes);
  return { assumptions: a, peakRangeBytes: { lowBytes: low, highBytes: high } };
}
