/**
 * What the config-only estimate assumes, in words the output prints, and the range its one large guess (the
 * CUDA context) spans. The context figures are public reports (docs/estimate.md, "CUDA context"): with lazy
 * module loading (PyTorch's default since 1.13, CUDA's since 12.2) 256 MiB bare on an RTX 3090 to 762 MiB
 * measured after training steps on an H100 (CUDA 13.0); eager loading (CUDA_MODULE_LOADING=EAGER, CUDA before 11.7)
 * took over 1 GiB.
 */
import { MiB } from '../units.js';
import { EAGER_CONTEXT_HIGH_BYTES, EAGER_CONTEXT_LOW_BYTES, type ModuleLoading } from './context.js';
import type { TransformerShape } from './architectures.js';
import type { Environment } from './estimate.js';
import type { TrainingSetup } from './setup.js';

export const CONTEXT_LOW_BYTES = 256 * MiB;
// The highest measured: 762 MiB at the end of a ResNet-50 run on an H100, CUDA 13.0 (gpus.ts, lazyContext).
export const CONTEXT_HIGH_BYTES = 762 * MiB;

export interface ConfigAssumptions {
  assumptions: string[];
  /** The peak with the context at its low and high reported sizes (only the context is varied). */
  peakRangeBytes: { lowBytes: number; highBytes: number };
}

/**
 * What the loss is computed over, when the estimate models it: a language model's vocabulary (one row per
 * token), a classifier's classes (one row per sample), or nothing (activations measured or unknown, a CNN
 * read from its weights): then no loss buffers are counted and none are assumed.
 */
export type LossOutput = { kind: 'vocabulary' } | { kind: 'classes'; classes: number } | null;

/**
 * The assumptions behind a config-only estimate of `setup`, and the peak's range when the context is a
 * default rather than given (`contextGiven`: --context was passed, so the range collapses to the peak); with
 * eager module loading (`--cuda` before 11.7) the range is eager loading's reported span (context.ts).
 */
export function configAssumptions(setup: TrainingSetup, env: Environment, peakBytes: number, contextGiven: boolean, loading: ModuleLoading = 'lazy', loss: LossOutput = null): ConfigAssumptions {
  const a: string[] = [];
  if (setup.precision === 'amp-bf16' || setup.precision === 'amp-fp16') {
    a.push('autocast: what CUDA autocast keeps in float32 is counted at 4 bytes — the residual stream (LayerNorm inputs, checkpointed block inputs), eager attention\'s softmax, the logits, their log-softmax and gradient, RMSNorm\'s up-cast; each linear layer is assumed to take one 16-bit copy of its input (separate q/k/v projections take three)');
  }
  if (loss?.kind === 'vocabulary') a.push('the loss over the vocabulary materialises float32 logits and their gradient at the start of backward');
  if (loss?.kind === 'classes') a.push(`the loss over the ${loss.classes} outputs per sample materialises float32 logits and their gradient at the start of backward`);
  a.push(
    setup.accumulation > 1
      ? 'gradients live from the first micro-batch to the optimizer step (accumulation)'
      : setup.keepGrads
        ? 'gradients stay allocated through the next forward pass (zero_grad(set_to_none=False), --keep-grads)'
        : 'gradients are freed after each step (zero_grad(set_to_none=True), the default since torch 2.0); with set_to_none=False (torch 1.x\'s default) they also stay through the forward pass: give --keep-grads',
  );
  if (setup.sharding === 'fsdp' || setup.sharding === 'zero3') {
    a.push(`${setup.sharding === 'fsdp' ? 'FSDP' : 'ZeRO-3'} buffers counted as FSDP2 keeps them with every block sharded, then the root: forward, the block computed and the next one gathered, backward, the block, the one prefetched, its unsharded gradients and the previous block's reduce-scatter input; the parameters outside the blocks stay gathered all step (sizes from the largest block, gathered in the mixed-precision param dtype)`);
  }
  a.push('optimizer state counted as it is after the first step (it is created lazily there, so step 1 peaks higher than step 0)');
  const [lowContext, highContext] = loading === 'eager' ? [EAGER_CONTEXT_LOW_BYTES, EAGER_CONTEXT_HIGH_BYTES] : [CONTEXT_LOW_BYTES, CONTEXT_HIGH_BYTES];
  if (!contextGiven) {
    a.push(
      loading === 'eager'
        ? `CUDA context ${Math.round(env.contextBytes / MiB)} MiB assumed (eager module loading, CUDA before 11.7); reports span ${lowContext / MiB}–${highContext / MiB} MiB — give --context to replace`
        : `CUDA context ${Math.round(env.contextBytes / MiB)} MiB assumed (lazy module loading); reports span ${lowContext / MiB}–${highContext / MiB} MiB, over 1 GiB with eager loading (--cuda before 11.7) — give --context to replace`,
    );
  }
  const low = contextGiven ? peakBytes : peakBytes - env.contextBytes + Math.min(lowContext, env.contextBytes);
  const high = contextGiven ? peakBytes : peakBytes - env.contextBytes + Math.max(highContext, env.contextBytes);
  return { assumptions: a, peakRangeBytes: { lowBytes: low, highBytes: high } };
}

/**
 * What `--params` with `--layers/--hidden` shapes the model as, every value spelled out: the ones not given are
 * defaults (heads hidden/128, vocab 32000, the MLP width of the --mlp kind), and the vocabulary alone sizes the
 * logits.
 */
export function paramsShapeAssumption(s: TransformerShape): string {
  const mlp = s.mlp === 'gelu' ? 'GeLU MLP, LayerNorm' : 'SwiGLU MLP, RMSNorm';
  return `shaped from --params as a decoder: ${s.layers} layers, hidden ${s.hidden}, ${s.heads} heads (${s.kvHeads} key/value), MLP width ${s.intermediate} (${mlp}), vocabulary ${s.vocab}, no dropout; values not given are defaults (--heads, --kv-heads, --intermediate, --vocab, --mlp replace them)`;
}
