/**
 * The training setup an estimate is made for, with the defaults a plain PyTorch loop has. Every field maps to
 * one `gpumem estimate` option; stages override a few of them.
 */
import type { TransformerShape } from './architectures.js';
import type { TensorInfo } from './safetensors.js';

export type Precision = 'fp32' | 'amp-bf16' | 'amp-fp16' | 'bf16';
export type OptimizerKind = 'adamw' | 'adam' | 'sgd' | 'sgd-momentum' | 'adafactor' | 'adam8bit';
export type OptimizerImpl = 'foreach' | 'fused' | 'for-loop';
export type Checkpointing = 'none' | 'selective' | 'full';
export type Sharding = 'none' | 'zero1' | 'zero2' | 'zero3' | 'fsdp';
export type AttentionImpl = 'sdpa' | 'eager';

/** The model being trained: named tensors when known (file or config), else only a parameter count. */
export interface ModelInput {
  label: string;
  /** Null for `--params N`: no names, so no freezing by prefix. */
  tensors: TensorInfo[] | null;
  totalParams: number;
  shape: TransformerShape | null;
}

export interface TrainingSetup {
  precision: Precision;
  optimizer: OptimizerKind;
  optimizerImpl: OptimizerImpl;
  /** Module prefixes whose parameters do not train. */
  freeze: string[];
  /** LoRA rank; 0 = no LoRA. With LoRA every base weight is frozen. */
  loraRank: number;
  /** Module names LoRA adapts (last name component, e.g. q_proj, v_proj). */
  loraModules: string[];
  /** PEFT's lora_dropout: each adapter drops its own copy of its input (0 = the input itself, shared). */
  loraDropout: number;
  checkpointing: Checkpointing;
  ema: boolean;
  sharding: Sharding;
  /** GPUs the sharding spreads over (1 = no sharding effect). */
  gpus: number;
  batch: number;
  seq: number | null;
  /** Measured bytes per sample that replace the transformer activation model (from `gpumem fit`). */
  activationBytesPerSample: number | null;
  /** True when activationBytesPerSample was measured for this very trainable set (a stage's act=), so no
   * share is taken off for frozen modules. */
  activationsForTrainableSet: boolean;
  /** The module prefixes that were frozen in the run activationBytesPerSample was measured on (the run as
   * given: `gpumem fit` measures the program itself). A setup that freezes differently (a stage without act=,
   * a step of progressive unfreezing) scales the figure by the ratio of saved shares. */
  activationsMeasuredFrozen: string[];
  attention: AttentionImpl;
  accumulation: number;
  /** Gradients stay allocated from one step to the next (zero_grad(set_to_none=False)), so the forward pass
   * runs beside them as with accumulation. */
  keepGrads: boolean;
  /** Softmax keeps its input for backward as well as its output (PyTorch before 1.11): eager attention then
   * saves the pre-softmax scores too. */
  softmaxKeepsInput: boolean;
}

/** Defaults matching a plain `torch.optim.AdamW` loop in fp32 on one GPU. */
export const DEFAULT_SETUP: TrainingSetup = {
  precision: 'fp32',
  optimizer: 'adamw',
  optimizerImpl: 'foreach',
  freeze: [],
  loraRank: 0,
  loraModules: ['q_proj', 'v_proj'],
  loraDropout: 0,
  checkpointing: 'none',
  ema: false,
  sharding: 'none',
  gpus: 1,
  batch: 1,
  seq: null,
  activationBytesPerSample: null,
  activationsForTrainableSet: false,
  activationsMeasuredFrozen: [],
  attention: 'sdpa',
  accumulation: 1,
  keepGrads: false,
  softmaxKeepsInput: false,
};

/** Bytes per element of weights, gradients and optimizer states for a precision. */
export function precisionBytes(precision: Precision): { weight: number; grad: number; state: number; activation: number } {
  switch (precision) {
    case 'fp32':
      return { weight: 4, grad: 4, state: 4, activation: 4 };
    // torch.autocast keeps fp32 parameters (they are the master weights) and fp32 grads; matmul outputs are
    // 16-bit (HF model_memory_anatomy.md; reference §4.1 "mixed, fp32 grads").
    case 'amp-bf16':
    case 'amp-fp16':
      return { weight: 4, grad: 4, state: 4, activation: 2 };
    // Pure bf16: parameters, grads and optimizer states all in bf16.
    case 'bf16':
      return { weight: 2, grad: 2, state: 2, activation: 2 };
  }
}
