/**
 * Saved activations per sample. Transformers follow Korthikanti et al. 2022 (arXiv 2205.05198, Table 2 /
 * §4.1: sbh(34 + 5as/h) per layer at 16-bit with dropout), written tensor by tensor so the same list adapts
 * to modern blocks (reference §4.2): SwiGLU MLPs, GQA K/V, SDPA/flash attention (no s² term, fp32
 * log-sum-exp instead), RMSNorm up-cast to fp32, and the logits/cross-entropy buffers. Other models use a
 * measured bytes-per-sample (from `gpumem fit` or the companion).
 */
import type { TransformerShape } from './architectures.js';
import { precisionBytes, type ModelInput, type TrainingSetup } from './setup.js';
import { isUnderPrefix } from './tensors.js';
import { isBuffer } from './model-states.js';

export interface ActivationModel {
  /** Saved for backward per sample at the end of the forward pass (layers + outputs). */
  savedBytesPerSample: number;
  /** Of which the output layer, logits and loss buffers. */
  outputBytesPerSample: number;
  /** Gradient of the logits alive at the start of backward. */
  outputGradBytesPerSample: number;
  /** One layer's full activations: the working set while a layer is recomputed or back-propagated. */
  layerWorkingBytesPerSample: number;
  /** How the numbers were obtained, for the report. */
  method: 'transformer' | 'measured' | 'none';
  /**
   * True for a measured figure: the slope of the peak per sample (gpumem fit's line), which already holds the
   * working set and the allocator slack that grow with the batch, so none is added on top of it.
   */
  slopeOfPeak: boolean;
  /** Layers that save activations (from the lowest trainable one up). */
  savingLayers: number | null;
  notes: string[];
}

/**
 * Activation model for `setup`. With a measured bytes-per-sample it is used as is, scaled down for frozen
 * leading modules (stated as an assumption); with a transformer shape it is computed per tensor; otherwise
 * activations are unknown and reported as zero with a note saying so.
 */
export function activationModel(model: ModelInput, setup: TrainingSetup): ActivationModel {
  if (setup.activationBytesPerSample !== null) return measured(model, setup, setup.activationBytesPerSample);
  if (model.shape) return transformer(model, model.shape, setup);
  return {
    savedBytesPerSample: 0,
    outputBytesPerSample: 0,
    outputGradBytesPerSample: 0,
    layerWorkingBytesPerSample: 0,
    method: 'none',
    slopeOfPeak: false,
    savingLayers: null,
    notes: ['activations not estimated (no transformer config, and weights alone do not tell them): give --activation-bytes-per-sample (measure it with gpumem fit), or trace the real step on the CPU: gpumem estimate --gpu GPU -- python train.py --batch-size {batch}'],
  };
}

function measured(model: ModelInput, setup: TrainingSetup, perSample: number): ActivationModel {
  const now = savedFraction(model, setup.freeze, setup.loraRank);
  const then = savedFraction(model, setup.activationsMeasuredFrozen, setup.loraRank);
  // Nothing saved in the measured run (all frozen) gives no share to scale from: the figure is kept.
  const fraction = setup.activationsForTrainableSet || then === 0 ? 1 : now / then;
  const notes: string[] = [];
  if (fraction !== 1) {
    notes.push(
      `the measured activations scaled to ${(fraction * 100).toFixed(1)} %: frozen leading modules save no activations, and the saved share is assumed to equal the share of parameters from the first trainable tensor on (${(now * 100).toFixed(1)} % here, ${(then * 100).toFixed(1)} % in the measured run) — give the stage its own act= to replace this`,
    );
  }
  const saved = Math.round(perSample * fraction);
  return {
    savedBytesPerSample: saved,
    outputBytesPerSample: 0,
    outputGradBytesPerSample: 0,
    // The slope of the peak already contains whatever working set is alive at the peak.
    layerWorkingBytesPerSample: 0,
    method: 'measured',
    slopeOfPeak: true,
    savingLayers: null,
    notes,
  };
}

/**
 * Share of parameters from the first trainable tensor (in checkpoint order) onwards. Autograd saves inputs
 * only where a gradient must flow, so nothing below the lowest trainable module is kept.
 */
function savedFraction(model: ModelInput, freeze: readonly string[], loraRank: number): number {
  if (!model.tensors || loraRank > 0 || freeze.length === 0) return 1;
  const params = model.tensors.filter((t) => !isBuffer(t.name));
  const total = params.reduce((a, t) => a + t.elements, 0);
  const first = params.findIndex((t) => !freeze.some((p) => isUnderPrefix(t.name, p)));
  if (first < 0 || total === 0) return 0;
  return params.slice(first).reduce((a, t) => a + t.elements, 0) / total;
}

/**
 * Which linear layers keep their input for backward. Autograd saves a matmul's input only when its weight needs a
 * gradient (checked on AddmmBackward0: a frozen Linear saves no input), so with LoRA — base weights frozen —
 * only the inputs the adapters read are kept, plus each adapter's rank-r middle tensor. With PEFT's lora_dropout
 * each adapter reads its own dropped copy instead (kept with its bool mask), and the shared input is not kept.
 */
export interface LinearTraining {
  attnIn: boolean;
  attnOut: boolean;
  mlpIn: boolean;
  mlpOut: boolean;
  /** Norm weights train (full training): RMSNorm then also keeps its normalised value. */
  norms: boolean;
  /** Adapted matrices and their rank (0 without LoRA). */
  adapters: number;
  rank: number;
  /** Adapters per input (attention input, attention output, MLP input, MLP output): copies under dropout. */
  perInput?: { attnIn: number; attnOut: number; mlpIn: number; mlpOut: number };
  /** The adapters drop their input (PEFT lora_dropout > 0). */
  dropout?: boolean;
}

export const FULL_TRAINING: LinearTraining = { attnIn: true, attnOut: true, mlpIn: true, mlpOut: true, norms: true, adapters: 0, rank: 0 };

/** LinearTraining for LoRA of rank `rank` on the modules named (last name component, as --lora-modules). */
export function loraTraining(modules: readonly string[], rank: number, dropout = 0): LinearTraining {
  const has = (names: readonly string[]): number => modules.filter((m) => names.includes(m)).length;
  const attnIn = has(['q_proj', 'k_proj', 'v_proj', 'query', 'key', 'value', 'c_attn', 'qkv_proj', 'Wqkv']);
  const attnOut = has(['o_proj', 'out_proj']);
  const mlpIn = has(['gate_proj', 'up_proj', 'fc1', 'c_fc']);
  const mlpOut = has(['down_proj', 'fc2']);
  return {
    attnIn: attnIn > 0, attnOut: attnOut > 0, mlpIn: mlpIn > 0, mlpOut: mlpOut > 0, norms: false,
    adapters: attnIn + attnOut + mlpIn + mlpOut, rank, perInput: { attnIn, attnOut, mlpIn, mlpOut }, dropout: dropout > 0,
  };
}

/**
 * Per-layer bytes for one sample of `s` tokens, tensor by tensor (reference §4.2). With `autocast`, what CUDA's
 * autocast keeps in float32 (ATen autocast_mode.h: layer_norm, softmax on its float32 lists) is counted at 4
 * bytes: the LayerNorm inputs, since the residual sum of a 16-bit matmul output and the float32 stream is
 * float32 by type promotion, and eager attention's softmax output, which the probabilities' 16-bit cast for
 * the value matmul then joins. With `softmaxInput` (PyTorch before 1.11, whose softmax backward took its input:
 * PyTorch issue 49600) the pre-softmax scores are saved too, in float32 under autocast or fp32 (the additive
 * mask of HF models is float32, so the sum is) and at `p` bytes in pure 16-bit training.
 */
export function layerBytes(
  shape: TransformerShape, s: number, p: number, attention: 'sdpa' | 'eager', keepScores: boolean, autocast = false, softmaxInput = false,
  trains: LinearTraining = FULL_TRAINING,
): number {
  const { hidden: h, heads: a, intermediate: f } = shape;
  const kd = shape.kvHeads * shape.headDim;
  const qd = shape.heads * shape.headDim;
  const mask = shape.dropout > 0 ? 1 : 0;
  const t = trains;
  const on = (x: boolean): number => (x ? 1 : 0);
  // SDPA saves its output for backward; eager attention's output is kept only by a training out-projection
  // (with dropping adapters, by none: each keeps its own copy).
  const attnOutput = attention === 'sdpa' || (t.attnOut && !t.dropout) ? 1 : 0;
  // What the matmuls reading one input keep of it: the input itself, once, when any of them trains; with dropping
  // adapters, each adapter's dropped copy (p bytes) and its bool mask (1 byte) instead.
  const n = t.perInput;
  const input = (trains: boolean, adapters: number | undefined): number => (t.dropout ? (adapters ?? 0) * (p + 1) : on(trains) * p);
  let bytes = t.adapters * p * s * t.rank; // each adapter's x·Aᵀ, kept for B's gradient
  bytes += input(false, n?.attnOut) * s * qd; // the out-projection adapters' copies (none without dropout)
  if (shape.mlp === 'gelu') {
    bytes += 2 * (autocast ? 4 : p) * s * h; // two LayerNorm inputs (the float32 residual stream under autocast)
    bytes += input(t.attnIn, n?.attnIn) * s * h + p * s * qd + 2 * p * s * kd + attnOutput * p * s * qd; // QKV input, Q, K, V, out-proj input
    bytes += mask * s * h; // attention output dropout mask
    // MLP input, what the GeLU keeps (its input, or gelu_new's four tensors), its output for a training fc2, dropout mask
    bytes += input(t.mlpIn, n?.mlpIn) * s * h + (shape.geluSaves ?? 1) * p * s * f + input(t.mlpOut, n?.mlpOut) * s * f + mask * s * h;
  } else {
    // HF eager RMSNorm keeps its fp32 up-cast input and, when its weight trains, the normalised value (float32
    // in fp32 and under autocast, where the residual stream is float32; else 16-bit).
    bytes += 2 * (4 + (t.norms ? (p === 4 || autocast ? 4 : p) : 0)) * s * h + 2 * 4 * s; // + each norm's fp32 rsqrt per token
    bytes += input(t.attnIn, n?.attnIn) * s * h + p * s * qd + 2 * p * s * kd + attnOutput * p * s * qd; // QKV input, Q (post-RoPE), K, V, o_proj input
    bytes += input(t.mlpIn, n?.mlpIn) * s * h + 3 * p * s * f + input(t.mlpOut, n?.mlpOut) * s * f; // gate/up input; gate, up, SiLU(gate); product
  }
  if (attention === 'eager') {
    // softmax out, dropout mask + out; under autocast a float32 softmax out, the mask and the 16-bit copy the value
    // matmul saves (made from the dropout output, or from the softmax output without dropout).
    if (keepScores) bytes += autocast ? (4 + mask + p) * a * s * s : p * a * s * s + (mask ? (1 + p) * a * s * s : 0);
    if (keepScores && softmaxInput) bytes += (autocast ? 4 : p) * a * s * s;
  } else {
    bytes += 4 * a * s; // SDPA/flash keep only a fp32 log-sum-exp per row
  }
  return bytes;
}

function transformer(model: ModelInput, shape: TransformerShape, setup: TrainingSetup): ActivationModel {
  const p = precisionBytes(setup.precision).activation;
  const s = setup.seq ?? shape.maxPositions;
  const selective = setup.checkpointing === 'selective';
  const autocast = setup.precision === 'amp-bf16' || setup.precision === 'amp-fp16';
  const trains = setup.loraRank > 0 ? loraTraining(setup.loraModules, setup.loraRank, setup.loraDropout) : FULL_TRAINING;
  const full = layerBytes(shape, s, p, setup.attention, true, autocast, setup.softmaxKeepsInput, trains);
  const perLayer =
    // Full checkpointing keeps each block's input: the residual stream, float32 under autocast.
    setup.checkpointing === 'full' ? (autocast ? 4 : p) * s * shape.hidden : layerBytes(shape, s, p, setup.attention, !selective, autocast, setup.softmaxKeepsInput, trains);
  const saving = savingLayers(model, shape, setup);
  const tokenLogits = shape.outputWidth === shape.vocab && shape.vocab > 0;
  const rows = tokenLogits ? s : 1; // classifiers read the [CLS] token only
  const w = shape.outputWidth;
  // Logits kept by the model output (p), the fp32 up-cast and the saved log-softmax (4 + 4); in fp32 the
  // up-cast is the same tensor (reference §4.2, asmirnov's 8·bsV, Megatron 4sbh·V/h).
  const finalNorm = (shape.norm === 'rmsnorm' && p !== 4 ? 4 + p : p) * s * shape.hidden;
  const anyTrainable = saving !== null;
  const outputBytes = anyTrainable ? finalNorm + (p === 4 ? 8 : p + 8) * rows * w : 0;
  const outputGrad = anyTrainable ? (p === 4 ? 4 : 4 + p) * rows * w : 0;
  const layersSaving = saving ?? 0;
  const notes: string[] = [];
  if (setup.attention === 'eager') notes.push('eager attention keeps the s² softmax per layer');
  return {
    savedBytesPerSample: layersSaving * perLayer + outputBytes,
    outputBytesPerSample: outputBytes,
    outputGradBytesPerSample: outputGrad,
    layerWorkingBytesPerSample: anyTrainable ? full : 0,
    method: 'transformer',
    slopeOfPeak: false,
    savingLayers: layersSaving,
    notes,
  };
}

/**
 * Number of layers that save activations: from the lowest layer holding a trainable parameter (or LoRA
 * adapter) up to the top. Null when nothing trains at all.
 */
function savingLayers(model: ModelInput, shape: TransformerShape, setup: TrainingSetup): number | null {
  if (setup.loraRank > 0 || setup.freeze.length === 0 || !model.tensors) return shape.layers;
  let lowest: number | null = null;
  let headTrains = false;
  for (const t of model.tensors) {
    if (isBuffer(t.name) || setup.freeze.some((p) => isUnderPrefix(t.name, p))) continue;
    const m = /\.(?:h|layers|layer)\.(\d+)\./.exec(t.name);
    if (m) lowest = Math.min(lowest ?? Infinity, Number(m[1]));
    else if (/embed|wte|wpe/.test(t.name)) lowest = 0;
    else headTrains = true;
  }
  if (lowest !== null) return shape.layers - lowest;
  return headTrains ? 0 : null;
}
